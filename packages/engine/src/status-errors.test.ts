// Issue 19 item 7: a status read that fails for any reason other than "does not exist" must say
// "unknown" (EngineUnavailableError), never "gone" or "stopped". An unreadable file (a directory
// where the file should be: EISDIR) stands in for EMFILE here; the e2e file
// tests/e2e/boundary/platform-faults.test.ts exhausts real descriptors.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EngineUnavailableError, SandboxNotFoundError } from './errors.js';
import { LocalEngine } from './local-engine.js';
import { Runc } from './runc.js';
import { ProcessRunner } from './runner.js';
import { SandboxFiles } from './sandbox-files.js';

describe('status reads: missing vs unknown', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tarmac-status-errors-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('runc state: no state.json is null, an unreadable one throws "unknown"', () => {
    const runc = new Runc(new ProcessRunner(), dir);
    expect(runc.state('absent')).toBeNull();
    expect(runc.alive('absent')).toBeNull();
    mkdirSync(join(dir, 'broken', 'state.json'), { recursive: true }); // EISDIR on read
    expect(() => runc.state('broken')).toThrow(EngineUnavailableError);
    expect(() => runc.alive('broken')).toThrow(EngineUnavailableError);
    mkdirSync(join(dir, 'torn'));
    writeFileSync(join(dir, 'torn', 'state.json'), '{"init_process_pid": 12');
    expect(() => runc.state('torn')).toThrow(EngineUnavailableError);
  });

  it('runc alive: a pid that no longer exists is dead, not unknown', () => {
    const runc = new Runc(new ProcessRunner(), dir);
    mkdirSync(join(dir, 'gone'));
    // pid_max is at most 4194304: this pid cannot exist.
    writeFileSync(
      join(dir, 'gone', 'state.json'),
      JSON.stringify({ init_process_pid: 4194305, init_process_start: 1 }),
    );
    expect(runc.alive('gone')).toBeNull();
  });

  it('sandbox files and engine inspect: missing is SandboxNotFoundError, unreadable is unknown', async () => {
    const files = new SandboxFiles(join(dir, 'sandboxes'));
    expect(() => files.read('sb-none')).toThrow(SandboxNotFoundError);
    mkdirSync(join(dir, 'sandboxes', 'sb-broken', 'sandbox.json'), { recursive: true });
    expect(() => files.read('sb-broken')).toThrow(EngineUnavailableError);
    mkdirSync(join(dir, 'sandboxes', 'sb-stop', 'stopped.json'), { recursive: true });
    expect(() => files.readStop('sb-stop')).toThrow(EngineUnavailableError);
    expect(files.readStop('sb-none')).toBeNull();

    const engine = new LocalEngine({
      home: dir,
      runtime: { nodeBinary: process.execPath, tiniBinary: '/usr/bin/tini', sandboxdBundle: '/nonexistent' },
      runcRoot: join(dir, 'runc'),
    });
    await expect(engine.inspect('sb-none')).rejects.toBeInstanceOf(SandboxNotFoundError);
    await expect(engine.inspect('sb-broken')).rejects.toBeInstanceOf(EngineUnavailableError);
    // list() skips sandboxes deleted meanwhile but must not hide an unreadable one.
    await expect(engine.list()).rejects.toBeInstanceOf(EngineUnavailableError);
  });
});
