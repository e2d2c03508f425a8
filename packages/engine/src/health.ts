// Readiness: poll sandboxd's /health over the bridge. Until sandboxd listens, the kernel in the
// sandbox's netns answers connects with RST at once, so a short poll interval is cheap.
import { request } from 'node:http';
import type { Clock } from './clock.js';
import { EngineError } from './errors.js';

export function probe(url: string, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(url, { agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

/** Resolves when url answers 200; `check` may throw to give up early (e.g. the sandbox died). */
export async function waitForHealth(
  url: string,
  timeoutMs: number,
  clock: Clock,
  check: () => void,
): Promise<void> {
  const deadline = clock.now() + timeoutMs;
  for (;;) {
    if (await probe(url, Math.max(1, Math.min(1000, deadline - clock.now())))) return;
    check();
    if (clock.now() > deadline) throw new EngineError(`${url} not ready after ${timeoutMs}ms`);
    await clock.sleep(2);
  }
}
