import { SECRET_MASK } from '@tarmac/contract';
import { randomBytes } from 'node:crypto';
import {
  SecretBox,
  sealEnvs,
  viewEnvs,
  type SecretEnv,
  type SecretView,
} from '../../../framework/secrets.js';

/**
 * Secrets inside a workload spec: env entries with `secret: true` (spec "Sandbox" runtime envs,
 * reference §0 show_secrets) and trigger `callbackSecret`s (reference §2.5: "auto-generated,
 * encrypted, returned only once; masked with * afterwards"). Both are sealed with part A's
 * SecretBox before the spec reaches the store.
 */
export interface TriggerLike {
  id?: string | undefined;
  type: string;
  configuration: { callbackSecret?: string | undefined; callbackUrl?: string | undefined };
}

export interface SecretBearingSpec {
  runtime?: { envs?: SecretEnv[] | undefined; [key: string]: unknown } | undefined;
  triggers?: TriggerLike[] | undefined;
}

/** Context bound into the ciphertext: a value sealed for one workload does not open in another. */
export const secretContext = (workspace: string, kind: string, name: string) =>
  `${workspace}/${kind}/${name}`;

/** Trigger ids the server filled in, and callback secrets it generated (shown once, in this response). */
export interface SealResult<S> {
  spec: S;
  generatedSecrets: Map<string, string>;
}

export function sealSpec<S extends SecretBearingSpec>(
  box: SecretBox,
  spec: S,
  context: string,
  previous: S | undefined,
): SealResult<S> {
  const generatedSecrets = new Map<string, string>();
  const out: S = structuredClone(spec);
  if (out.runtime?.envs) out.runtime.envs = sealEnvs(box, out.runtime.envs, context, previous?.runtime?.envs);
  if (out.triggers) {
    const before = new Map((previous?.triggers ?? []).map((t) => [t.id, t]));
    const used = new Set<string>();
    out.triggers = out.triggers.map((trigger, index) => {
      // Ids are auto-generated and de-duplicated when absent (reference §2.5).
      let id = trigger.id ?? `${trigger.type}-${index}`;
      while (used.has(id)) id = `${id}-${randomBytes(2).toString('hex')}`;
      used.add(id);
      const configuration = { ...trigger.configuration };
      const given = configuration.callbackSecret;
      const kept = before.get(id)?.configuration.callbackSecret;
      if (given === SECRET_MASK && kept !== undefined) {
        configuration.callbackSecret = kept;
      } else if (given !== undefined) {
        configuration.callbackSecret = box.seal(given, context);
      } else if (trigger.type === 'http-async' && configuration.callbackUrl) {
        if (kept !== undefined) configuration.callbackSecret = kept;
        else {
          const fresh = randomBytes(24).toString('base64url');
          generatedSecrets.set(id, fresh);
          configuration.callbackSecret = box.seal(fresh, context);
        }
      }
      return { ...trigger, id, configuration };
    });
  }
  return { spec: out, generatedSecrets };
}

/** The stored spec as a response shows it: masked, or revealed for admins asking show_secrets. */
export function viewSpec<S extends SecretBearingSpec>(
  box: SecretBox,
  stored: S,
  context: string,
  view: SecretView,
  generatedSecrets: ReadonlyMap<string, string> = new Map(),
): S {
  const out: S = structuredClone(stored);
  if (out.runtime?.envs) out.runtime.envs = viewEnvs(box, out.runtime.envs, context, view);
  if (out.triggers) {
    out.triggers = out.triggers.map((trigger) => {
      const secret = trigger.configuration.callbackSecret;
      if (secret === undefined) return trigger;
      const fresh = trigger.id !== undefined ? generatedSecrets.get(trigger.id) : undefined;
      const shown =
        fresh ?? (view === 'reveal' && SecretBox.isSealed(secret) ? box.open(secret, context) : SECRET_MASK);
      return { ...trigger, configuration: { ...trigger.configuration, callbackSecret: shown } };
    });
  }
  return out;
}
