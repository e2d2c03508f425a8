// Typed errors the platform maps to API errors (e.g. ImageNotFoundError -> 400 INVALID_IMAGE).

export class EngineError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

export class ImageNotFoundError extends EngineError {
  constructor(readonly ref: string) {
    super(`image not found: ${ref}`);
  }
}

export class InvalidImageError extends EngineError {}

export class SandboxNotFoundError extends EngineError {
  constructor(readonly id: string) {
    super(`sandbox not found: ${id}`);
  }
}

/**
 * The host could not say what state a sandbox is in: reading its files failed with something other
 * than "does not exist" (EMFILE/ENFILE when descriptors run out, EAGAIN, EIO, a torn file). The
 * sandbox may be alive; callers retry later and must never treat this as "gone" (issue 19 item 7:
 * EMFILE taken for "container gone" once marked every live sandbox FAILED).
 */
export class EngineUnavailableError extends EngineError {
  constructor(
    readonly what: string,
    cause: unknown,
  ) {
    super(`could not read ${what}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** True for the errno codes that mean "this path does not exist", and only those. */
export function isMissingPath(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'ESRCH';
}

/**
 * An error that says the host is short of something right now (descriptors, processes, memory), or
 * EngineUnavailableError: the operation may succeed later and proves nothing about the sandbox.
 */
export function isTransientHostError(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as Error).cause, depth++) {
    if (e instanceof EngineUnavailableError) return true;
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EMFILE' || code === 'ENFILE' || code === 'EAGAIN' || code === 'ENOMEM') return true;
  }
  return false;
}

export class SandboxExistsError extends EngineError {
  constructor(readonly id: string) {
    super(`sandbox already exists: ${id}`);
  }
}

export class VolumeNotFoundError extends EngineError {
  constructor(readonly volume: string) {
    super(`volume not found: ${volume}`);
  }
}

export class VolumeExistsError extends EngineError {
  constructor(readonly volume: string) {
    super(`volume already exists: ${volume}`);
  }
}

export class VolumeInUseError extends EngineError {}

export class InvalidSpecError extends EngineError {}

/** freeze() found the cgroup thawed again before it was frozen: a resume won the race. */
export class FreezeAbortedError extends EngineError {}

export class CommandError extends EngineError {
  constructor(
    readonly command: string,
    readonly code: number | null,
    readonly stderr: string,
  ) {
    super(`${command} failed (${code ?? 'signal'}): ${stderr.trim().slice(0, 2000)}`);
  }
}

/** The host cannot give a sandbox the memory it asks for (issue 19 item 13). */
export class InsufficientCapacityError extends EngineError {}
