import type { Store } from '@tarmac/store';
import type { Logger } from 'pino';
import { Meter } from './meter.js';
import { sandboxSource, volumeSource } from './resource-sources.js';
import { jobSource } from './job-source.js';
import { countAsyncRequests, replicaSource, type ReplicaUsagePort } from './run-source.js';

/** How often the meter closes open intervals when no change notice arrives (ARCHITECTURE.md "Meter");
 * TARMAC_METERING_INTERVAL_SECONDS overrides it (config.ts). */
export const DEFAULT_METERING_INTERVAL_SECONDS = 60;

/**
 * The platform's meter over the store: every producer of time-based usage is listed here.
 * `replicas`: the run plane's agent and function replicas and async requests (run-source.ts).
 */
export function createMeter(
  store: Store,
  logger: Logger,
  now: () => number = Date.now,
  replicas?: ReplicaUsagePort,
): Meter {
  const accounts = new Map<string, string>();
  const accountOf = async (workspace: string) => {
    const cached = accounts.get(workspace);
    if (cached) return cached;
    const row = await store.workspaces.get(workspace);
    if (row) accounts.set(workspace, row.accountId);
    return row?.accountId;
  };
  const sources = [
    sandboxSource(store, accountOf),
    volumeSource(store, accountOf),
    jobSource(store, accountOf),
  ];
  if (replicas) sources.push(replicaSource(replicas, accountOf, now));
  const meter = new Meter({ sources, metering: store.metering, now, logger });
  if (replicas) {
    countAsyncRequests(replicas, meter, accountOf, (err) =>
      logger.warn({ err }, 'an async request was not counted (agent_async_requests_count)'),
    );
  }
  return meter;
}
