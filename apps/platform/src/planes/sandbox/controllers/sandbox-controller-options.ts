import type { Engine, HostFile } from '@tarmac/engine';
import type { Logger } from 'pino';
import type { LiveSandboxes } from './live-sandboxes.js';
import type { Resources } from './record-writer.js';
import type { EnvVar, SandboxRow } from '../records/sandbox-record.js';

export interface SandboxControllerOptions {
  engine: Engine;
  resources: Resources;
  live: LiveSandboxes;
  logger: Logger;
  now?: () => number;
  /**
   * Records the warm pool is handing a member to right now (WarmPool.owns): the create that wrote
   * the record makes it live once the member has its hostname (issue 20), not a reconcile.
   */
  claiming?: (recordId: string) => boolean;
  /** The spec's envs in clear (secret values are stored sealed; opened only here, at start). */
  revealEnvs?: (row: SandboxRow) => EnvVar[];
  /**
   * What every sandbox gets besides its spec: the egress proxy's env vars and the CA bundle files
   * (egress/sandbox-setup.ts) and the per-sandbox credentials (gateway/sandbox-credentials.ts),
   * hence the record id. The spec's own envs win over these env names.
   */
  sandboxDefaults?: (sandbox: {
    id: string;
    workspace: string;
    name: string;
  }) => Promise<{ env: Record<string, string>; files: HostFile[] }>;
  /**
   * The engine ref `spec.runtime.image` names in the sandbox's workspace, undefined when none it may
   * use (images are per workspace: planes/catalogue/images/workspace-images.ts, handed in by compose.ts). Default: the ref as is.
   */
  resolveImage?: (workspace: string, ref: string) => Promise<string | undefined>;
  /**
   * The host's memory ledger is full (InsufficientCapacityError): free `memoryMB` if possible —
   * the warm pool's members go first (issue 20) — and resolve with how much was freed; the create
   * is then tried once more.
   */
  makeRoom?: (memoryMB: number) => Promise<number>;
  /** Freezes a container (the engine's cgroup freezer): a disabled sandbox keeps its state. */
  freeze?: (engineId: string) => Promise<void>;
  /** Told when a sandbox's record changed in a way expiry depends on, or it left DEPLOYED. */
  onRecord?: (row: SandboxRow) => void;
  readyTimeoutMs?: number;
  defaultGraceSeconds?: number;
  defaultRetentionMs?: number;
}
