import { lifecycleDurationSeconds } from '@tarmac/contract';
import { sandboxEngineId } from './engine-ids.js';
import { event, mutate } from './record-writer.js';
import type { SandboxControllerOptions } from './sandbox-controller-options.js';
import { inspectSandbox } from './sandbox-engine-calls.js';
import { markVolumes } from './volume-marks.js';
import { systemOf, type SandboxRow, type SandboxSpecView } from '../records/sandbox-record.js';

// The way out of the live map (ARCHITECTURE.md "Resources and the reconcile loop"): disabled,
// deleted, and purged once terminated long enough.

/** The controller's clock (the `now` option, or Date.now). */
export interface Clock {
  now: () => number;
  date: () => Date;
}

/**
 * `spec.enabled: false` (issue 14 item 8): out of the live map first, so the gateway stops
 * serving it at once (503 saying it is disabled), then frozen with its processes and files kept
 * (billed as standby memory, like STANDBY) and DEACTIVATED. Enabled again, the API sets
 * DEPLOYING and deploy() keeps the frozen container; the next request thaws it.
 */
export async function deactivate(o: SandboxControllerOptions, clock: Clock, row: SandboxRow): Promise<void> {
  o.live.remove(row.id);
  const engineId = systemOf(row).engineId ?? sandboxEngineId(row.id);
  let info = await inspectSandbox(o.engine, engineId);
  if (info?.status === 'STOPPED') {
    await o.engine.deleteSandbox(engineId);
    info = undefined;
  }
  if (info && info.status !== 'FROZEN') await o.freeze?.(engineId);
  const kept = info !== undefined && o.freeze !== undefined;
  await mutate<SandboxSpecView>(o.resources, row.id, (r) =>
    r.status === 'DEACTIVATING'
      ? {
          status: 'DEACTIVATED',
          state: kept ? 'STANDBY' : null,
          events: [
            ...r.events,
            event(
              'Standby',
              'DEACTIVATED',
              kept
                ? 'Sandbox disabled: frozen with its processes and files, not served until spec.enabled is true'
                : 'Sandbox disabled: not running, not served until spec.enabled is true',
              clock.date(),
            ),
          ],
        }
      : undefined,
  );
}

export async function deleteSandbox(
  o: SandboxControllerOptions,
  clock: Clock,
  row: SandboxRow,
): Promise<void> {
  o.live.remove(row.id);
  const engineId = systemOf(row).engineId ?? sandboxEngineId(row.id);
  if (await inspectSandbox(o.engine, engineId)) {
    const grace = row.spec.runtime?.terminationGracePeriodSeconds ?? o.defaultGraceSeconds ?? 10;
    await o.engine.stopSandbox(engineId, grace);
    await o.engine.deleteSandbox(engineId);
  }
  await markVolumes(o.resources, row, false, clock.date);
  const at = clock.date().toISOString();
  await mutate<SandboxSpecView>(o.resources, row.id, (r) =>
    r.status === 'DELETING'
      ? {
          status: 'TERMINATED',
          state: null,
          terminatedAt: at,
          events: [...r.events, event('Deletion', 'TERMINATED', 'Sandbox deleted', clock.date())],
        }
      : undefined,
  );
}

export async function purgeIfDue(o: SandboxControllerOptions, clock: Clock, row: SandboxRow): Promise<void> {
  o.live.remove(row.id);
  if (!row.terminatedAt) return;
  const text = row.spec.lifecycle?.terminatedRetention;
  const seconds = text ? lifecycleDurationSeconds(text) : undefined;
  const retention = seconds !== undefined ? seconds * 1000 : (o.defaultRetentionMs ?? 5 * 60_000);
  if (Date.parse(row.terminatedAt) + retention <= clock.now()) await o.resources.delete(row.id);
}
