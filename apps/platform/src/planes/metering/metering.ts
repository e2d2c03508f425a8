import type { Store } from '@tarmac/store';
import type { Logger } from 'pino';
import { Meter } from './meter.js';
import { sandboxSource, volumeSource } from './resource-sources.js';
import { jobSource } from './job-source.js';

/** How often the meter closes open intervals when no change notice arrives (ARCHITECTURE.md "Meter");
 * TARMAC_METERING_INTERVAL_SECONDS overrides it (config.ts). */
export const DEFAULT_METERING_INTERVAL_SECONDS = 60;

/** The platform's meter over the store: every producer of time-based usage is listed here. */
export function createMeter(store: Store, logger: Logger, now: () => number = Date.now): Meter {
  const accounts = new Map<string, string>();
  const accountOf = async (workspace: string) => {
    const cached = accounts.get(workspace);
    if (cached) return cached;
    const row = await store.workspaces.get(workspace);
    if (row) accounts.set(workspace, row.accountId);
    return row?.accountId;
  };
  return new Meter({
    sources: [sandboxSource(store, accountOf), volumeSource(store, accountOf), jobSource(store, accountOf)],
    metering: store.metering,
    now,
    logger,
  });
}
