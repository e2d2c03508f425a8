// A PUT that changes `spec.runtime.memory` of a live sandbox changes its memory limit (and CPU with
// it) in place: the same processes keep running, the new limit is what the sandbox sees, and an
// event says so. A limit below what is in use is refused by the kernel; the sandbox keeps running
// with its old limit, and the event says that too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../support/platform.js';
import {
  cleanUp,
  createSandbox,
  exec,
  getSandbox,
  missingCapability,
  spawnProcess,
  startSandboxPlatform,
  waitSandbox,
} from './support.js';

const missing = missingCapability();
const LIMIT = 'cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max';
const MiB = 1024 * 1024;

describe.skipIf(missing !== null)(
  `memory changes of a live sandbox${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    let p: RunningPlatform | undefined;
    const names = ['grow', 'busy'];

    beforeAll(async () => {
      p = await startSandboxPlatform();
    }, 15 * 60_000);

    afterAll(() => cleanUp(p, names), 120_000);

    async function putMemory(name: string, memory: number) {
      const current = await getSandbox(p!, name);
      const runtime = { ...(current.spec.runtime as Record<string, unknown>), memory };
      const res = await p!.api(`/v0/sandboxes/${name}`, {
        method: 'PUT',
        body: JSON.stringify({ metadata: { name }, spec: { ...current.spec, runtime } }),
      });
      expect(res.status, await res.clone().text()).toBe(200);
      const before = current.events.length;
      return waitSandbox(
        p!,
        name,
        (s) => s.status === 'DEPLOYED' && s.events.length > before && s.events.at(-1)?.type === 'Deployment',
        `${name} redeployed`,
        20_000,
      );
    }

    it('applies a new memory limit in place, keeping the running processes', async () => {
      await createSandbox(p!, 'grow', {}, { memory: 1024 });
      await spawnProcess(p!, 'grow', 'sleep 600', { name: 'sleeper' });
      const pid = (await exec(p!, 'grow', 'pgrep -x sleep')).stdout?.trim();
      expect(pid).toMatch(/^\d+$/);
      expect((await exec(p!, 'grow', LIMIT)).stdout?.trim()).toBe(String(1024 * MiB));

      const after = await putMemory('grow', 2048);
      expect(after.events.at(-1)?.message).toContain('memory limit changed from 1024 MB to 2048 MB in place');
      expect((await exec(p!, 'grow', LIMIT)).stdout?.trim()).toBe(String(2048 * MiB));
      expect((await exec(p!, 'grow', 'pgrep -x sleep')).stdout?.trim()).toBe(pid);
      expect((after.spec.runtime as { memory: number }).memory).toBe(2048);
    }, 60_000);

    it('keeps the old limit when the new one is below what is in use, and says why', async () => {
      await createSandbox(p!, 'busy', {}, { memory: 1024 });
      await spawnProcess(
        p!,
        'busy',
        `python3 -c 'import time; b = bytearray(300 * 1024 * 1024); time.sleep(600)'`,
        { name: 'hog' },
      );
      // Until the hog's 300 MB are resident (there is no swap to push them to).
      const rss = `awk '/VmRSS/ {print $2}' /proc/$(pgrep -x python3 || echo 0)/status 2>/dev/null || echo 0`;
      const deadline = Date.now() + 15_000;
      while (Number((await exec(p!, 'busy', rss)).stdout?.trim() || 0) < 300 * 1024) {
        if (Date.now() > deadline) throw new Error('the memory hog did not start');
        await new Promise((r) => setTimeout(r, 100));
      }
      const after = await putMemory('busy', 128);
      expect(after.events.at(-1)?.message).toMatch(
        /memory limit stays 1024 MB: the change to 128 MB was refused/,
      );
      expect((await exec(p!, 'busy', LIMIT)).stdout?.trim()).toBe(String(1024 * MiB));
      expect((await exec(p!, 'busy', 'pgrep -x python3')).stdout?.trim()).toMatch(/^\d+$/);
    }, 60_000);
  },
);
