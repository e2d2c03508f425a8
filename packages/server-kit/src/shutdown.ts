import type { Logger } from 'pino';

export interface Closable {
  close(): Promise<void> | void;
}

/**
 * Graceful shutdown: stop accepting, let in-flight requests finish (bounded by `timeoutMs`), then
 * close the rest in order. Returns the function to call on SIGTERM/SIGINT; a second call is a no-op.
 */
export function gracefulShutdown(
  steps: { name: string; close: () => Promise<void> | void }[],
  options: { logger: Logger; timeoutMs?: number },
): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () =>
    (running ??= (async () => {
      options.logger.info('shutting down');
      for (const step of steps) {
        try {
          await withTimeout(Promise.resolve(step.close()), options.timeoutMs ?? 10_000);
        } catch (err) {
          options.logger.error({ err, step: step.name }, 'shutdown step failed');
        }
      }
      options.logger.info('shut down');
    })());
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
