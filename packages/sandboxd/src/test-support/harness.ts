// Test harness: a sandboxd on 127.0.0.1:<random> whose working directory, home, log dir and tmp
// dir live in a fresh temp directory (the "sandbox filesystem" of the test).
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxdConfig } from '../config.js';
import { createSandboxd, defaultConfig, type Sandboxd, type SandboxdDeps } from '../sandboxd.js';

export interface TestDaemon {
  base: string;
  root: string;
  /** The working directory (root/work). */
  wd: string;
  d: Sandboxd;
  config: SandboxdConfig;
  stop(): Promise<void>;
}

export async function startDaemon(
  overrides: Partial<SandboxdConfig> = {},
  deps: SandboxdDeps = {},
): Promise<TestDaemon> {
  const root = mkdtempSync(join(tmpdir(), 'sandboxd-test-'));
  const wd = join(root, 'work');
  for (const d of ['work', 'home', 'logs', 'tmp']) mkdirSync(join(root, d));
  // eslint-disable-next-line no-restricted-properties -- test support: the host PATH for spawned shells
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: join(root, 'home') };
  const config = defaultConfig({
    workingDir: wd,
    home: join(root, 'home'),
    logDir: join(root, 'logs'),
    tmpDir: join(root, 'tmp'),
    // Processes survive a daemon restart the way they do in a sandbox (FIFOs + table on disk).
    stateDir: join(root, 'state'),
    mkfifo: ['mkfifo'],
    env,
    ...overrides,
  });
  const d = createSandboxd(config, { restartDelayMs: 50, ...deps });
  d.server.listen(0, '127.0.0.1');
  await once(d.server, 'listening');
  const base = `http://127.0.0.1:${(d.server.address() as AddressInfo).port}`;
  return {
    base,
    root,
    wd,
    d,
    config,
    async stop() {
      await d.close();
      // SIGKILLed by close(); wait for their ends to be recorded before the files go.
      await Promise.race([
        Promise.all(d.processes.list().map((p) => p.exited())),
        new Promise((r) => setTimeout(r, 2000)),
      ]);
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** fetch + JSON body. */
export async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests inspect arbitrary JSON
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(base + path, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* raw */
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** Reads a streamed body line by line until `until` returns true (or the stream ends). */
export async function readLines(
  res: Response,
  until: (lines: string[]) => boolean,
  timeoutMs = 10_000,
): Promise<string[]> {
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let buf = '';
  const lines: string[] = [];
  const deadline = Date.now() + timeoutMs;
  try {
    while (Date.now() < deadline) {
      const r = await Promise.race([
        reader.read(),
        new Promise<{ done: true; value: undefined }>((res2) =>
          setTimeout(() => res2({ done: true, value: undefined }), Math.max(1, deadline - Date.now())),
        ),
      ]);
      if (r.done) break;
      buf += dec.decode(r.value, { stream: true });
      const parts = buf.split('\n');
      buf = parts.pop() ?? '';
      lines.push(...parts);
      if (until(lines)) break;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return lines;
}

/** Polls `check` until it holds; throws after `timeoutMs`. */
export async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  stepMs = 25,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
