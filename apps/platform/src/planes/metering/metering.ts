import type { Store } from '@tarmac/store';
import type { Logger } from 'pino';
import { ConfigError } from '../../config.js';
import { Meter } from './meter.js';
import { sandboxSource, volumeSource } from './resource-sources.js';

/** How often the meter closes open intervals when no change notice arrives (ARCHITECTURE.md "Meter"). */
export const DEFAULT_METERING_INTERVAL_SECONDS = 60;

/** `TARMAC_METERING_INTERVAL_SECONDS` → milliseconds; a positive number of seconds, default 60. */
export function meteringIntervalMs(text: string | undefined): number {
  if (text === undefined || text === '') return DEFAULT_METERING_INTERVAL_SECONDS * 1000;
  const seconds = Number(text);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 3600) {
    throw new ConfigError(
      `TARMAC_METERING_INTERVAL_SECONDS must be a number of seconds from 0 to 3600, got "${text}"`,
    );
  }
  return Math.round(seconds * 1000);
}

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
    sources: [sandboxSource(store, accountOf), volumeSource(store, accountOf)],
    metering: store.metering,
    now,
    logger,
  });
}
