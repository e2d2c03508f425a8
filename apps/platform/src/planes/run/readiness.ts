/**
 * Readiness of a replica (issue 16; reference control-plane.md §5.1: "Readiness is a TCP startup
 * probe on PORT"): the first TCP connection the workload accepts on its port. No HTTP path is
 * required of agents, so none is asked.
 */
import { connect } from 'node:net';

/** Resolves true when `host:port` accepts a connection within `timeoutMs`, false otherwise. */
export function tcpAnswers(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export interface ProbeOptions {
  host: string;
  port: number;
  /** Give up after this long (TARMAC_RUN_READY_TIMEOUT_SECONDS). */
  deadlineMs: number;
  /**
   * Between attempts (a refused connection answers at once): 10 ms during the first second (a
   * request may be held for this replica: scale to zero's cold start), then 100 ms.
   */
  intervalMs?: number;
  /** Checked between attempts: true stops the probe (the container exited, or it was removed). */
  gone: () => Promise<boolean> | boolean;
  now?: () => number;
}

export type ProbeResult = 'ready' | 'gone' | 'timeout';

/** Probes until the port answers, the container is gone, or the deadline passes. */
export async function probeUntilReady(o: ProbeOptions): Promise<ProbeResult> {
  const now = o.now ?? Date.now;
  const started = now();
  const end = started + o.deadlineMs;
  for (;;) {
    const interval = o.intervalMs ?? (now() - started < 1000 ? 10 : 100);
    if (await tcpAnswers(o.host, o.port, Math.max(50, Math.min(1000, end - now())))) return 'ready';
    if (await o.gone()) return 'gone';
    if (now() >= end) return 'timeout';
    await new Promise((r) => setTimeout(r, interval));
  }
}
