import { SandboxNotFoundError, type Engine, type SandboxInfo } from '@tarmac/engine';
import type { Logger } from 'pino';
import { DEFAULT_MEMORY_MB, type SandboxRow } from '../records/sandbox-record.js';

// What the sandbox controller asks of the engine about a container that exists or may exist.

/**
 * The container's state, or undefined only when the engine says it does not exist. Any other
 * failure (EngineUnavailableError on EMFILE and the like) propagates: the reconcile fails, the
 * record is left as it is, and the next pass asks again (issue 19 item 7).
 */
export async function inspectSandbox(engine: Engine, engineId: string): Promise<SandboxInfo | undefined> {
  try {
    return await engine.inspect(engineId);
  } catch (err) {
    if (err instanceof SandboxNotFoundError) return undefined;
    throw err;
  }
}

/**
 * A spec update of a live sandbox: the memory limit (and CPU with it) changes in place, since the
 * cgroup allows it without touching a process; image and envs only shape new sandboxes. The
 * kernel may refuse a smaller limit than what is in use: the sandbox then keeps its limit and the
 * event says so. Returns the event's account of it.
 */
export async function applyMemory(
  engine: Engine,
  logger: Logger,
  row: SandboxRow,
  info: SandboxInfo,
): Promise<string> {
  const wanted = row.spec.runtime?.memory ?? DEFAULT_MEMORY_MB;
  const rest = 'image and envs changes apply to new sandboxes';
  if (info.memoryMB === wanted) return rest;
  try {
    await engine.resize(info.id, wanted);
    return `memory limit changed from ${info.memoryMB} MB to ${wanted} MB in place; ${rest}`;
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    logger.warn({ err, sandbox: row.name }, 'could not change the memory limit of a live sandbox');
    return `memory limit stays ${info.memoryMB} MB: the change to ${wanted} MB was refused (${why}); ${rest}`;
  }
}

/** The image's stored size, measured once by the engine; unknown (not billed) if it is gone. */
export async function imageSize(engine: Engine, logger: Logger, ref: string): Promise<number | undefined> {
  try {
    return (await engine.ensureImage(ref)).sizeBytes;
  } catch (err) {
    logger.warn({ err, image: ref }, 'image size unknown; image storage is not metered');
    return undefined;
  }
}
