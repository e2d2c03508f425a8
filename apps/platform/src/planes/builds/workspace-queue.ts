/**
 * One build at a time per workspace, the rest queued in arrival order (issue 15 "Builds": "one at
 * a time per workspace by default with a queue"). `limit` raises the per-workspace concurrency.
 */
export class WorkspaceQueue {
  private readonly running = new Map<string, number>();
  private readonly waiting = new Map<string, Array<() => void>>();

  constructor(private readonly limit = 1) {}

  /** How many tasks of `workspace` wait before a new one would start. */
  ahead(workspace: string): number {
    const busy = this.running.get(workspace) ?? 0;
    return busy < this.limit ? 0 : (this.waiting.get(workspace)?.length ?? 0) + 1;
  }

  /** Resolves once nothing runs or waits (shutdown). */
  async idle(): Promise<void> {
    while (this.running.size > 0 || this.waiting.size > 0) await new Promise((r) => setTimeout(r, 50));
  }

  async run<T>(workspace: string, task: () => Promise<T>): Promise<T> {
    if ((this.running.get(workspace) ?? 0) >= this.limit) {
      await new Promise<void>((resolve) => {
        const list = this.waiting.get(workspace) ?? [];
        list.push(resolve);
        this.waiting.set(workspace, list);
      });
    }
    this.running.set(workspace, (this.running.get(workspace) ?? 0) + 1);
    try {
      return await task();
    } finally {
      const left = (this.running.get(workspace) ?? 1) - 1;
      if (left === 0) this.running.delete(workspace);
      else this.running.set(workspace, left);
      const next = this.waiting.get(workspace)?.shift();
      if (this.waiting.get(workspace)?.length === 0) this.waiting.delete(workspace);
      next?.();
    }
  }
}
