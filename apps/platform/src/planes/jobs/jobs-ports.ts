/**
 * What the jobs plane needs of other planes, declared here and handed in by the composition root
 * (apps/platform/ARCHITECTURE.md): the job records (catalogue), the engine that runs sandboxes
 * (the sandbox plane's), and what every sandbox container gets besides its spec (egress env and
 * CA files, image resolution per workspace). The plane constructs none of them.
 */
import type { Engine, HostFile } from '@tarmac/engine';
import type { JobSpec } from '@tarmac/contract';

/** A job as the runner needs it: its spec and its envs in clear (secrets opened). */
export interface JobRecord {
  name: string;
  workspace: string;
  spec: JobSpec;
  envs: Record<string, string>;
}

export interface JobCatalogue {
  /** undefined when the workspace has no such job. */
  get(workspace: string, name: string): Promise<JobRecord | undefined>;
  /** Every job of every workspace with a cron trigger (cron-triggers.ts); `envs` left empty. */
  withCronTriggers(): Promise<JobRecord[]>;
}

/** The engine calls a task needs: the same engine, isolation, image and volume store as sandboxes. */
export type TaskEngine = Pick<
  Engine,
  | 'createSandbox'
  | 'inspect'
  | 'stopSandbox'
  | 'deleteSandbox'
  | 'readLog'
  | 'ensureImage'
  | 'createVolume'
  | 'deleteVolume'
  | 'listVolumes'
>;

export interface TaskSetup {
  /** Egress proxy env (with the task's own proxy credentials) and CA files, like a sandbox's. */
  defaults(credentialId: string): Promise<{ env: Record<string, string>; files: HostFile[] }>;
  /** The engine ref an image reference names in a workspace, undefined when it may not use it. */
  resolveImage(workspace: string, ref: string): Promise<string | undefined>;
}

/** Seals the execution's env at rest (framework SecretBox). */
export interface Sealer {
  seal(plain: string, context: string): string;
  open(sealed: string, context: string): string;
}
