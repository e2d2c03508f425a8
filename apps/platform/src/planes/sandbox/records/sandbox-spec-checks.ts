import type { SandboxSpec } from '@tarmac/contract';
import { ApiError, invalidField } from '@tarmac/server-kit';
import { validateNetworkSpec } from './validate.js';
import type { SandboxServiceDeps } from './sandboxes.deps.js';

// What a sandbox spec must be to be stored (create and update): applicable as written, within the
// host's memory, naming an image the workspace can run.

/**
 * `spec.network` must be applicable as written (egress/validate.ts): an unsupported feature is a
 * 400 naming the field, never silently ignored.
 */
export function checkNetwork(spec: SandboxSpec): void {
  checkApplicable(spec);
  const issues = validateNetworkSpec(spec.network);
  const first = issues[0];
  if (!first) return;
  const field = (path: string) => path.replace(/\[(\d+)\]/g, '.$1');
  throw new ApiError('validation_error', `${field(first.path)}: ${first.message}`, {
    details: issues.map((i) => ({ field: field(i.path), message: i.message })),
  });
}

/**
 * Fields this platform cannot apply are a 400 naming them, never stored and ignored (issue 14
 * item 8): there is one network (no VPCs), and sandboxes get no extra kernel capabilities, so the
 * extraArgs flags can only be `disabled` (what every sandbox already is).
 */
function checkApplicable(spec: SandboxSpec): void {
  if (spec.vpc !== undefined && spec.vpc !== 'default') {
    throw invalidField(
      'spec.vpc',
      'must be "default": this platform has no VPCs (egress is set with spec.network)',
    );
  }
  for (const [flag, value] of Object.entries(spec.runtime?.extraArgs ?? {})) {
    if (value === 'enabled') {
      throw invalidField(
        `spec.runtime.extraArgs.${flag}`,
        'enabled is not available on this platform: sandboxes run without the capabilities it needs',
      );
    }
  }
}

/**
 * A sandbox asking for more memory than this host could ever give it is refused up front (issue
 * 19 item 13) instead of going FAILED later; one that fits the host but not what is free right
 * now goes FAILED with the engine's reason (the controller's Failure event).
 */
export function checkMemory(spec: SandboxSpec, maxMemoryMB: number | undefined): void {
  const memory = spec.runtime?.memory;
  const max = maxMemoryMB;
  if (memory === undefined || max === undefined || memory <= max) return;
  throw invalidField(
    'spec.runtime.memory',
    `must be at most ${max} (MB): this host has ${max} MB of memory for sandboxes`,
  );
}

export async function checkImage(
  validateImage: SandboxServiceDeps['validateImage'],
  workspace: string,
  name: string,
  spec: SandboxSpec,
): Promise<void> {
  const image = spec.runtime?.image;
  if (image === undefined || !validateImage) return;
  if (await validateImage(image, workspace)) return;
  throw new ApiError('invalid_image', `spec.runtime.image: image "${image}" is not available`, {
    details: [{ field: 'spec.runtime.image', message: `image "${image}" is not available` }],
    extra: { sandbox_name: name, workspace, status_code: 400, step: 'create', reason: 'INVALID_IMAGE' },
  });
}

/**
 * The spec with every `null` field removed: null means "clear it" (issue 14 item 5: the vendor
 * SDK's updateTtl(null) and updateLifecycle(null)), and a cleared field is an absent one.
 */
export function withoutNulls(spec: SandboxSpec): SandboxSpec {
  const drop = <T extends object>(o: T): T =>
    Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null)) as T;
  const out = drop(spec);
  return out.runtime ? { ...out, runtime: drop(out.runtime) } : out;
}
