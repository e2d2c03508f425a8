// The warm pool's members in a platform home (issue 20), read from the engine's records the way
// an operator would: a member carries the `pool` label from its boot and `pool-ready` once it can
// be claimed (warm-pool.ts); runc tells the frozen members from the one kept thawed (hot-members.ts).
// Shared by the pool e2e files and bench/sandbox-first-command.ts (no vitest here).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const RUNC_ROOT = '/run/tarmac/runc';

export interface PoolMemberState {
  id: string;
  ready: boolean;
  /** runc's status: `paused` (frozen) or `running` (the hot member, or one still booting). */
  status: string | undefined;
}

/** Every container of this home still labelled as a pool member (claimed ones are relabelled). */
export function poolMembers(home: string): PoolMemberState[] {
  const dir = join(home, 'sandboxes');
  if (!existsSync(dir)) return [];
  const out: PoolMemberState[] = [];
  for (const id of readdirSync(dir)) {
    let labels: Record<string, string>;
    try {
      labels = (JSON.parse(readFileSync(join(dir, id, 'sandbox.json'), 'utf8')) as { labels: typeof labels })
        .labels;
    } catch {
      continue; // being made: no sandbox.json yet
    }
    if (labels.pool === undefined) continue;
    const state = spawnSync('runc', ['--root', RUNC_ROOT, 'state', id], { encoding: 'utf8' });
    let status: string | undefined;
    try {
      status = (JSON.parse(state.stdout || '{}') as { status?: string }).status;
    } catch {
      status = undefined;
    }
    out.push({ id, ready: labels['pool-ready'] === '1', status });
  }
  return out;
}

/**
 * Engine ids of the members a create can claim now. `legacy`: a build from before the
 * `pool-ready` label (a bench's baseline checkout), whose ready members are the frozen ones.
 */
export function readyPoolMembers(home: string, legacy = false): string[] {
  return poolMembers(home)
    .filter((m) =>
      legacy ? m.status === 'paused' : m.ready && (m.status === 'paused' || m.status === 'running'),
    )
    .map((m) => m.id);
}
