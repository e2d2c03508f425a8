import { snapshotRoutes as r, type Env, type ForkResponse, type Snapshot } from '@tarmac/contract';
import type { TarmacClient } from '../client.js';

export interface ForkOptions {
  /** Fork from this snapshot; omitted, a snapshot of the live files is taken first. */
  snapshotId?: string;
  /** Variables of the fork on top of the source's. */
  envs?: Env[];
}

/**
 * `sandbox.snapshots`: filesystem snapshots (the sandbox's writable layer and volume contents,
 * copied while it is frozen; process memory is not included) and forks to a new sandbox.
 */
export class SandboxSnapshots {
  constructor(
    private readonly client: TarmacClient,
    private readonly sandbox: string,
  ) {}

  list(): Promise<Snapshot[]> {
    return this.client.request(r.listSnapshots, { params: { sandboxName: this.sandbox } });
  }
  create(name?: string): Promise<Snapshot> {
    return this.client.request(r.createSnapshot, {
      params: { sandboxName: this.sandbox },
      body: name ? { name } : {},
    });
  }
  /** Deletes by id (or by name among this sandbox's snapshots). */
  async delete(idOrName: string): Promise<void> {
    await this.client.request(r.deleteSandboxSnapshot, {
      params: { sandboxName: this.sandbox, snapshotId: idOrName },
    });
  }
  /** A new sandbox `targetName` with the snapshot's files; returns once it is created (DEPLOYING). */
  fork(targetName: string, options: ForkOptions = {}): Promise<ForkResponse> {
    return this.client.request(r.forkSandbox, {
      params: { sandboxName: this.sandbox },
      body: { targetType: 'sandbox', targetName, ...options },
    });
  }
}
