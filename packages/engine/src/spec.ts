// Validation and shaping of a SandboxSpec before anything is allocated for it.
import type { SandboxSpec } from './engine.js';
import { InvalidSpecError } from './errors.js';

const ID = /^[a-z0-9][a-z0-9-]{0,62}$/;

export function validate(spec: SandboxSpec): void {
  if (!ID.test(spec.id)) throw new InvalidSpecError(`invalid sandbox id ${spec.id}`);
  if (!Number.isInteger(spec.memoryMB) || spec.memoryMB < 64) {
    throw new InvalidSpecError('memoryMB must be an integer >= 64');
  }
  if (spec.diskMB !== undefined && (!Number.isInteger(spec.diskMB) || spec.diskMB < 64)) {
    throw new InvalidSpecError('diskMB must be an integer >= 64');
  }
  for (const v of spec.volumes ?? []) {
    if (!v.mountPath.startsWith('/') || v.mountPath.split('/').includes('..')) {
      throw new InvalidSpecError(`invalid mountPath ${v.mountPath}`);
    }
  }
}

/**
 * What a command container runs: the spec's command, or (given `[]`) the image's Entrypoint then
 * Cmd as OCI images define them. An image that names neither cannot run as a command.
 */
export function commandArgs(command: string[], image: { entrypoint?: string[]; cmd?: string[] }): string[] {
  const args = command.length > 0 ? command : [...(image.entrypoint ?? []), ...(image.cmd ?? [])];
  if (args.length === 0) {
    throw new InvalidSpecError('the image names no Entrypoint or Cmd, so there is nothing to run');
  }
  return args;
}

/** Image env first, spec env overriding by name. */
export function mergeEnv(imageEnv: string[], extra: Record<string, string>): string[] {
  const map = new Map<string, string>();
  for (const kv of imageEnv) {
    const i = kv.indexOf('=');
    if (i > 0) map.set(kv.slice(0, i), kv.slice(i + 1));
  }
  for (const [k, v] of Object.entries(extra)) map.set(k, v);
  return [...map].map(([k, v]) => `${k}=${v}`);
}
