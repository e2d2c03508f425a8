/**
 * Requests that reach a sandbox before it is live wait here instead of getting a 503 (issue 14
 * item 1: the vendor SDK documents that callers need not wait for a deploy, and retries GETs
 * only, so a write or exec right after `create` must be held, not refused).
 *
 * Event-driven, never polled: the sandbox controller reports every record it reconciled
 * (`notify`, wired in sandbox-plane.ts from its onRecord hook, plus the change feed's notices of
 * API writes such as a delete), and a waiter only wakes to look at the record again. Bounded: at
 * most `maxHeld` requests wait at once (beyond that the 503 comes back at once), and each waits at
 * most the gateway's start timeout (config TARMAC_SANDBOX_START_WAIT_SECONDS).
 */
import type { Store } from '@tarmac/store';
import type { LiveSandbox } from '../controllers/live-sandboxes.js';
import type { StartWaiters } from '../../../framework/held-requests.js';
import { SANDBOX_KIND } from '../records/sandbox-record.js';

// The waiters themselves are generic (framework/held-requests.ts, shared with the run plane).
export { StartWaiters, type StartWaiter } from '../../../framework/held-requests.js';

/** Default bound of a held request: covers a first base-image build (~45 s, issue 14) twice over. */
export const DEFAULT_START_WAIT_MS = 120_000;

/** What the hold needs: the live map, the records, the waiters and the bound. */
export interface HoldDeps {
  live: { get(workspace: string, name: string): LiveSandbox | undefined };
  store: Pick<Store, 'resources'>;
  starts?: StartWaiters | undefined;
  waitMs: number;
  now: () => number;
}

/** Why a held request is answered without the sandbox: the status and message to send. */
export class NotLive extends Error {
  constructor(
    readonly status: 404 | 503,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The sandbox once it is live (issue 14 item 1): one still DEPLOYING (or DEPLOYED and not
 * registered yet) holds the caller until the controller reports it live; NotLive 503 at once when
 * it FAILED (with the failure's reason) or is disabled, 404 when it is gone, 503 when the wait
 * runs out or too many requests are held. Each wake-up is a notice about this sandbox.
 */
export async function untilLive(
  d: HoldDeps,
  workspace: string,
  name: string,
  gone: AbortSignal,
): Promise<LiveSandbox> {
  const deadline = d.now() + d.waitMs;
  const starts = d.starts;
  let held = false;
  try {
    for (;;) {
      const watch = starts?.watch(workspace, name); // before the read: no notice is lost
      try {
        const entry = d.live.get(workspace, name);
        if (entry) return entry;
        const row = await d.store.resources.get(workspace, SANDBOX_KIND, name);
        if (!row || row.terminatedAt) throw new NotLive(404, `sandbox ${name} not found`);
        if (row.status === 'FAILED') {
          const why = [...row.events].reverse().find((e) => e.status === 'FAILED')?.message;
          throw new NotLive(503, `sandbox ${name} FAILED${why ? `: ${why}` : ''}`);
        }
        if (row.status === 'DEACTIVATED' || row.status === 'DEACTIVATING') {
          throw new NotLive(503, `sandbox ${name} is disabled (spec.enabled is false)`);
        }
        if (row.status !== 'DEPLOYING' && row.status !== 'DEPLOYED') {
          throw new NotLive(503, `sandbox ${name} is ${row.status ?? 'not running'}`);
        }
        if (!watch || !starts) throw new NotLive(503, `sandbox ${name} is starting; retry shortly`);
        if (!held && !(held = starts.hold())) {
          throw new NotLive(
            503,
            `sandbox ${name} is starting and ${starts.maxHeld} requests already wait for sandboxes to start; retry shortly`,
          );
        }
        const left = deadline - d.now();
        if (left <= 0 || gone.aborted) {
          throw new NotLive(
            503,
            `sandbox ${name} is still starting after ${Math.round(d.waitMs / 1000)} s; retry shortly`,
          );
        }
        await watch.next(left, gone);
      } finally {
        watch?.cancel();
      }
    }
  } finally {
    if (held) starts!.release();
  }
}

interface Closable {
  once(event: 'close', f: () => void): unknown;
  /** A ServerResponse's (Writable's) state. */
  readonly closed?: boolean;
  /** A socket's state. */
  readonly destroyed?: boolean;
}

/**
 * Aborts when the caller's response or socket closes (a held request of a caller who left);
 * already aborted when it closed before this was asked for.
 */
export function closedSignal(stream: Closable): AbortSignal {
  const controller = new AbortController();
  if (stream.closed === true || stream.destroyed === true) controller.abort();
  else stream.once('close', () => controller.abort());
  return controller.signal;
}

/**
 * `closedSignal`, made on first use: only a request that has to wait for its sandbox needs one,
 * and an AbortController and a listener per request were ~0.1–0.2 ms of a warm exec's gateway
 * CPU on the 2-core host (issue 20).
 */
export function lazyClosedSignal(stream: Closable): () => AbortSignal {
  let signal: AbortSignal | undefined;
  return () => (signal ??= closedSignal(stream));
}
