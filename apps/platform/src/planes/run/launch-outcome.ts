/**
 * What a replica start came to (replica-launcher.ts `LaunchOutcome`), applied to its set: ready →
 * it joins the set (and serves); an error, an exit or a probe timeout → the set backs off (1 s, 2 s,
 * 4 s …) and, when no other replica of the set serves, the record says FAILED with the replica's
 * last log lines. A scale-up replica that fails while others serve is only logged: the record
 * stays DEPLOYED (ARCHITECTURE.md "Autoscaling").
 */
import type { Logger } from 'pino';
import type { IdlePolicy } from './idle-policy.js';
import type { LaunchOutcome, ReplicaLauncher } from './replica-launcher.js';
import { backoffMs, isUp, type ReplicaSet } from './replica-sets.js';
import type { RunCatalogue, RunKind, RunRecord } from './run-ports.js';

export interface SettleDeps {
  launcher: Pick<ReplicaLauncher, 'remove'>;
  idle: Pick<IdlePolicy, 'woke'>;
  catalogue: Pick<RunCatalogue, 'setStatus'>;
  logger: Logger;
  readyTimeoutMs: number;
  onRecord?: (kind: RunKind, workspace: string, name: string) => void;
  now: () => number;
}

export async function settleLaunch(
  d: SettleDeps,
  record: RunRecord,
  set: ReplicaSet,
  out: LaunchOutcome,
): Promise<void> {
  // A scale-up replica that fails while others serve: backoff and a log line, no FAILED status.
  const serving = set.replicas.some(isUp);
  if (out.kind === 'cancelled') {
    const r = out.replica;
    await d.launcher.remove(r.engineId, r.recordId, r.slot, r.attempt, 0).catch(() => undefined);
    return;
  }
  if (out.kind === 'ready') {
    set.replicas.push(out.replica);
    d.idle.woke(record, set, out.replica);
    d.onRecord?.(record.kind, record.workspace, record.name);
    return;
  }
  if (out.kind === 'error') {
    if (out.blocked) set.blocked = out.message;
    if (!out.transient) set.crashes++;
    set.notBeforeMs = d.now() + (out.transient ? 1000 : backoffMs(set.crashes));
    if (!out.transient && !serving)
      await d.catalogue.setStatus(record, 'FAILED', `Could not start a replica: ${out.message}`);
    return;
  }
  set.crashes++;
  set.notBeforeMs = d.now() + backoffMs(set.crashes);
  const r = out.replica;
  await d.launcher.remove(r.engineId, r.recordId, r.slot, r.attempt, 0).catch(() => undefined);
  if (serving) {
    d.logger.warn({ record: record.name, replica: r.engineId, outcome: out.kind }, 'scale-up failed');
    return;
  }
  const why =
    out.kind === 'exited'
      ? `exited (code ${out.exitCode ?? 'unknown'}) before listening on port ${r.port}`
      : `did not listen on port ${r.port} within ${Math.round(d.readyTimeoutMs / 1000)} s`;
  await d.catalogue.setStatus(
    record,
    'FAILED',
    `Replica ${why}; retrying in ${Math.round(backoffMs(set.crashes) / 1000)} s${tail(out.lastLines)}`,
  );
}

export const tail = (lines: string) => (lines ? `; last log lines:\n${lines}` : '; it printed nothing');
