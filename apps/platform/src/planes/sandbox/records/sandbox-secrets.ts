import type { SandboxSpec } from '@tarmac/contract';
import {
  sealEnvs,
  sealMap,
  viewEnvs,
  viewMap,
  type SecretBox,
  type SecretView,
} from '../../../framework/secrets.js';

/**
 * The secret parts of a sandbox spec: `runtime.envs[].secret` values and
 * `network.proxy.routing[].secrets` (spec "Sandbox": `{{SECRET:<name>}}` substitution values).
 * Sealed before storing, masked or revealed when shown.
 */
export const sandboxSecretContext = (workspace: string, name: string) => `${workspace}/sandbox/${name}`;

export function sealSandboxSpec(
  box: SecretBox,
  spec: SandboxSpec,
  context: string,
  previous?: SandboxSpec,
): SandboxSpec {
  return transform(spec, previous, {
    envs: (envs, before) => sealEnvs(box, envs, context, before),
    map: (map, before) => sealMap(box, map, context, before),
  });
}

export function viewSandboxSpec(
  box: SecretBox,
  spec: SandboxSpec,
  context: string,
  view: SecretView,
): SandboxSpec {
  return transform(spec, undefined, {
    envs: (envs) => viewEnvs(box, envs, context, view),
    map: (map) => viewMap(box, map, context, view),
  });
}

type Envs = NonNullable<NonNullable<SandboxSpec['runtime']>['envs']>;
interface Transform {
  envs: (envs: Envs | undefined, before: Envs | undefined) => Envs | undefined;
  map: (
    map: Record<string, string> | undefined,
    before: Record<string, string> | undefined,
  ) => Record<string, string> | undefined;
}

/** Whether the spec holds any secret value (most do not: lists then skip the copy). */
function hasSecrets(spec: SandboxSpec): boolean {
  return (
    (spec.runtime?.envs ?? []).some((e) => e.secret) ||
    (spec.network?.proxy?.routing ?? []).some((r) => r.secrets !== undefined)
  );
}

function transform(spec: SandboxSpec, previous: SandboxSpec | undefined, t: Transform): SandboxSpec {
  if (!hasSecrets(spec)) return spec;
  const out: SandboxSpec = structuredClone(spec);
  if (out.runtime?.envs) out.runtime.envs = t.envs(out.runtime.envs, previous?.runtime?.envs);
  const routing = out.network?.proxy?.routing;
  if (routing) {
    routing.forEach((route, i) => {
      if (route.secrets)
        route.secrets = t.map(route.secrets, previous?.network?.proxy?.routing?.[i]?.secrets);
    });
  }
  return out;
}
