/**
 * Runs work for one key at a time, and coalesces: a reconcile asked for while one runs for the
 * same key runs once more afterwards (level-triggered: it reads the latest record anyway).
 */
export class KeyedQueue {
  private readonly running = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();

  constructor(private readonly onError: (key: string, err: unknown) => void) {}

  run(key: string, work: () => Promise<void>): Promise<void> {
    const current = this.running.get(key);
    if (current) {
      this.again.add(key);
      return current;
    }
    const loop = (async () => {
      do {
        this.again.delete(key);
        try {
          await work();
        } catch (err) {
          this.onError(key, err);
        }
      } while (this.again.has(key));
      this.running.delete(key);
    })();
    this.running.set(key, loop);
    return loop;
  }

  /** Resolves when nothing is running (shutdown, tests). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running.values()]);
  }
}
