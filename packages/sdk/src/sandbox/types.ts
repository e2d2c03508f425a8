import type {
  Env,
  Preview,
  PreviewToken,
  RouteBodyInput,
  Sandbox as SandboxRecord,
  computeRoutes,
} from '@tarmac/contract';

/** Sandbox and preview resources: the contract's types (packages/contract resources/). */
export type SandboxResource = SandboxRecord;
export type SandboxCreateBody = RouteBodyInput<typeof computeRoutes.createSandbox>;
export type SandboxSpecInput = SandboxCreateBody['spec'];
export type SandboxUpdateBody = RouteBodyInput<typeof computeRoutes.updateSandbox>;
export type SandboxPort = NonNullable<NonNullable<SandboxSpecInput['runtime']>['ports']>[number];
export type SandboxEnv = Env;
export type PreviewResource = Preview;
export type PreviewTokenResource = PreviewToken;

/** The short form of `Sandbox.create` (reference sandbox-api.md §2.4). */
export interface SandboxCreateOptions {
  name?: string;
  image?: string;
  memory?: number;
  ports?: (number | SandboxPort)[];
  envs?: Record<string, string> | SandboxEnv[];
  ttl?: string;
  expires?: Date | string;
  region?: string;
  labels?: Record<string, string>;
  externalId?: string;
  volumes?: SandboxSpecInput['volumes'];
  lifecycle?: SandboxSpecInput['lifecycle'];
  network?: SandboxSpecInput['network'];
}

/** Converts the short form into the `{metadata, spec}` body. */
export function sandboxBody(options: SandboxCreateOptions): SandboxCreateBody {
  const envs = Array.isArray(options.envs)
    ? options.envs
    : Object.entries(options.envs ?? {}).map(([name, value]) => ({ name, value }));
  const runtime: NonNullable<SandboxSpecInput['runtime']> = {
    ...(options.image ? { image: options.image } : {}),
    ...(options.memory ? { memory: options.memory } : {}),
    ...(options.ports?.length
      ? {
          ports: options.ports.map((p) =>
            typeof p === 'number' ? { target: p, protocol: 'HTTP' } : { protocol: 'HTTP', ...p },
          ),
        }
      : {}),
    ...(envs.length ? { envs } : {}),
    ...(options.ttl ? { ttl: options.ttl } : {}),
    ...(options.expires
      ? { expires: options.expires instanceof Date ? options.expires.toISOString() : options.expires }
      : {}),
  };
  return {
    metadata: {
      ...(options.name ? { name: options.name } : {}),
      ...(options.labels ? { labels: options.labels } : {}),
      ...(options.externalId ? { externalId: options.externalId } : {}),
    },
    spec: {
      runtime,
      ...(options.region ? { region: options.region } : {}),
      ...(options.volumes ? { volumes: options.volumes } : {}),
      ...(options.lifecycle ? { lifecycle: options.lifecycle } : {}),
      ...(options.network ? { network: options.network } : {}),
    },
  };
}
