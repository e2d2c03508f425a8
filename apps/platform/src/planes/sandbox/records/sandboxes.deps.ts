import type { CollectionDeps } from '../../../framework/collection.js';
import type { VolumesService } from '../volumes/volumes.service.js';
import type { SandboxPool } from '../pool/sandbox-pool.js';

export interface SandboxServiceDeps extends CollectionDeps {
  volumes: VolumesService;
  /** Whether the workspace can run an image reference (the engine's image store; default: accept). */
  validateImage?: (ref: string, workspace: string) => Promise<boolean>;
  /**
   * Most memory (MB) one sandbox can have on this host: what the engine commits to sandboxes in
   * total (host memory x overcommit, LocalEngine.memoryCapacityMB). Unbounded when absent.
   */
  maxMemoryMB?: number;
  /** The warm pool (issue 20): a create it can serve gets a pre-booted sandbox, DEPLOYED at once. */
  pool?: SandboxPool;
  /**
   * Listens for the sandbox controller's next word about one sandbox (gateway/start-waiters.ts):
   * a create of a name whose previous sandbox is still being torn down waits for it with this
   * (issue 14 item 2). Without it such a create is a 409 until the teardown ends.
   */
  watchSandbox?: (workspace: string, name: string) => SandboxWatch;
  /** Runs when a sandbox's deletion is requested (its previews and their tokens go with it). */
  onDelete?: (workspace: string, name: string) => Promise<void>;
}

/** One listener for notices about a sandbox (gateway/start-waiters.ts StartWaiter). */
export interface SandboxWatch {
  next(ms: number): Promise<void>;
  cancel(): void;
}
