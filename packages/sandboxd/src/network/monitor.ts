// Port monitors (reference sandbox-api.md §1.4 POST/DELETE /network/process/{pid}/monitor): polls
// the process's sockets and POSTs `{pid, port}` to the callback for each newly listening port.
import type { PortEntry } from '@tarmac/contract';

export type PortLister = (pid: number) => PortEntry[];
export type Notify = (url: string, body: { pid: number; port: number }) => Promise<void>;

export const fetchNotify: Notify = async (url, body) => {
  await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
};

export class PortMonitors {
  private readonly timers = new Map<number, NodeJS.Timeout>();

  constructor(
    private readonly list: PortLister,
    private readonly notify: Notify = fetchNotify,
    private readonly pollMs = 500,
  ) {}

  start(pid: number, callback: string): void {
    this.stop(pid);
    const seen = new Set<number>();
    const tick = (): void => {
      let ports: PortEntry[];
      try {
        ports = this.list(pid);
      } catch {
        return;
      }
      for (const p of ports) {
        if (p.protocol !== 'tcp' || p.state !== 'LISTEN' || seen.has(p.localPort)) continue;
        seen.add(p.localPort);
        this.notify(callback, { pid, port: p.localPort }).catch(() => undefined);
      }
    };
    tick();
    const timer = setInterval(tick, this.pollMs);
    timer.unref();
    this.timers.set(pid, timer);
  }

  stop(pid: number): void {
    const t = this.timers.get(pid);
    if (t) clearInterval(t);
    this.timers.delete(pid);
  }

  stopAll(): void {
    for (const pid of [...this.timers.keys()]) this.stop(pid);
  }
}
