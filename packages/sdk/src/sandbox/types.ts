import type { CoreEvent, DeploymentStatus, Metadata } from '@tarmac/contract';

/**
 * Sandbox and preview resources as the management API returns them (spec "Sandbox", "Sandbox
 * preview"; reference §2.6). Written here until the resource catalogue's schemas land in the
 * contract; then these become aliases of the contract's types.
 */
export interface SandboxPort {
  name?: string;
  target: number;
  protocol?: string;
}
export interface SandboxEnv {
  name: string;
  value: string;
  secret?: boolean;
}
export interface SandboxRuntime {
  image?: string;
  /** MB; CPU share is memory / 2048 cores. */
  memory?: number;
  ports?: SandboxPort[];
  envs?: SandboxEnv[];
  /** Max age, e.g. `30m`, `24h`, `7d`. */
  ttl?: string;
  expires?: string;
  terminationGracePeriodSeconds?: number;
  extraArgs?: Record<string, string>;
}
export interface SandboxSpec {
  enabled?: boolean;
  region?: string;
  vpc?: string;
  runtime?: SandboxRuntime;
  volumes?: { name: string; mountPath: string; readOnly?: boolean }[];
  lifecycle?: {
    expirationPolicies?: { type: string; value: string; action: string }[];
    terminatedRetention?: string;
  };
  network?: Record<string, unknown>;
}
export interface SandboxResource {
  metadata: Metadata;
  spec: SandboxSpec;
  status: DeploymentStatus | 'TERMINATING';
  state?: 'RUNNING' | 'STANDBY';
  events: CoreEvent[];
  expiresIn?: number;
  lastUsedAt?: string;
}
export interface SandboxCreateBody {
  metadata: { name?: string; displayName?: string; labels?: Record<string, string>; externalId?: string };
  spec: SandboxSpec;
}

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
  volumes?: SandboxSpec['volumes'];
  lifecycle?: SandboxSpec['lifecycle'];
  network?: SandboxSpec['network'];
}

export interface PreviewResource {
  metadata: {
    name: string;
    displayName?: string;
    resourceName?: string;
    resourceType?: string;
    workspace?: string;
    createdAt?: string;
    updatedAt?: string;
  };
  spec: {
    port: number;
    public?: boolean;
    prefixUrl?: string;
    customDomain?: string;
    requestHeaders?: Record<string, string>;
    responseHeaders?: Record<string, string>;
    ttl?: string;
    expires?: string;
    region?: string;
    url?: string;
  };
  status?: string;
  events?: CoreEvent[];
}
export interface PreviewTokenResource {
  metadata: { name: string; previewName?: string; resourceName?: string; workspace?: string };
  spec: { expiresAt: string; token?: string; expired?: boolean };
}

/** Converts the short form into the `{metadata, spec}` body. */
export function sandboxBody(options: SandboxCreateOptions): SandboxCreateBody {
  const envs = Array.isArray(options.envs)
    ? options.envs
    : Object.entries(options.envs ?? {}).map(([name, value]) => ({ name, value }));
  const runtime: SandboxRuntime = {
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
