/**
 * Requests in flight on a replica, measured the way the autoscaler reads them (autoscaler.ts):
 * the gateway calls `beginRequest`/`endRequest` around every forward (an open stream or WebSocket
 * counts until it ends), and each controller pass takes the area under the in-flight curve
 * (request x ms) since its last look. An area, not a snapshot: a hundred 5 ms requests between two
 * passes count as the half request in flight they were on average, not as 0 or 1 by luck
 * (Knative's queue-proxy reports the same average concurrency).
 */
import type { Replica } from './replica-sets.js';

function settle(r: Replica, now: number): void {
  const m = (r.load ??= { area: 0, sinceMs: now });
  if (now > m.sinceMs) m.area += r.inflight * (now - m.sinceMs);
  m.sinceMs = Math.max(m.sinceMs, now);
}

export function beginRequest(r: Replica, now: number): void {
  settle(r, now);
  r.inflight++;
}

export function endRequest(r: Replica, now: number): void {
  settle(r, now);
  r.inflight = Math.max(0, r.inflight - 1);
  r.lastUsedMs = now;
}

/** The in-flight area since the previous call (request x ms), reset to zero. */
export function takeArea(r: Replica, now: number): number {
  settle(r, now);
  const area = r.load!.area;
  r.load!.area = 0;
  return area;
}
