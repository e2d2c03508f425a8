/**
 * Expiry fires on time (within a second), not on a slow sweep: one timer per sandbox with an
 * expiry, armed at its earliest deadline (expiry.ts) and re-armed whenever the record is
 * reconciled. After a restart the lifecycle controller's first resync reconciles every record,
 * which re-arms every timer. ttl-idle moves with use: when its timer fires, the deadline is
 * recomputed with the in-memory last use and the timer re-armed if the sandbox was used since.
 */
import type { SandboxSpec } from '@tarmac/contract';
import type { ResourceRow } from '@tarmac/store';
import { sandboxExpiresAt } from '../records/sandbox-expiry.js';
import type { LiveSandboxes } from './live-sandboxes.js';
import { systemOf, type SandboxRow } from '../records/sandbox-record.js';

/** setTimeout's ceiling (~24.8 days); longer deadlines re-arm when the timer fires. */
const MAX_TIMER_MS = 2_147_483_647;

export interface ExpiryTimersOptions {
  live: LiveSandboxes;
  expire: (id: string, reason: string) => Promise<void>;
  now?: () => number;
  onError?: (id: string, err: unknown) => void;
}

export class ExpiryTimers {
  private readonly timers = new Map<string, { timer: NodeJS.Timeout; row: SandboxRow }>();
  private readonly now: () => number;

  constructor(private readonly o: ExpiryTimersOptions) {
    this.now = o.now ?? Date.now;
  }

  /** (Re)arms the timer for a record; disarms it when the sandbox is not live or has no expiry. */
  track(row: SandboxRow): void {
    this.disarm(row.id);
    if (row.status !== 'DEPLOYED' && row.status !== 'DEPLOYING') return;
    const expiry = this.expiryOf(row);
    if (!expiry) return;
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, expiry.at - this.now()));
    const timer = setTimeout(() => this.fire(row.id), delay);
    timer.unref();
    this.timers.set(row.id, { timer, row });
  }

  disarm(id: string): void {
    const t = this.timers.get(id);
    if (t) clearTimeout(t.timer);
    this.timers.delete(id);
  }

  stop(): void {
    for (const id of [...this.timers.keys()]) this.disarm(id);
  }

  /**
   * The expiry with the freshest last use this process knows of. The sandboxes module's own
   * computation, so the API's `expiresIn` and the deletion agree.
   */
  expiryOf(row: SandboxRow): { at: number; reason: string } | undefined {
    const live = this.o.live.getById(row.id);
    const sys = systemOf(row);
    const stored = sys.lastUsedAt ? Date.parse(sys.lastUsedAt) : undefined;
    const lastUsed = live ? Math.max(live.lastUsedMs, stored ?? 0) : stored;
    const view = {
      ...row,
      system: lastUsed ? { ...row.system, lastUsedAt: new Date(lastUsed).toISOString() } : row.system,
    } as unknown as ResourceRow<SandboxSpec>;
    const at = sandboxExpiresAt(view);
    return at ? { at: at.getTime(), reason: 'expiration policy' } : undefined;
  }

  private fire(id: string): void {
    const t = this.timers.get(id);
    if (!t) return;
    const expiry = this.expiryOf(t.row);
    if (expiry && expiry.at > this.now()) {
      this.track(t.row); // moved (ttl-idle after use) or beyond one timer's reach
      return;
    }
    this.timers.delete(id);
    if (expiry) void this.o.expire(id, expiry.reason).catch((err: unknown) => this.o.onError?.(id, err));
  }
}
