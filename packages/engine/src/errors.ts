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
