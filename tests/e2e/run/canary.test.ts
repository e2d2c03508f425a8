// Issue 16, revisions and traffic, end to end on the real platform, real buildah and real runc:
// the e2e server built from a folder runs as an agent; a runtime change makes a second revision
// that answers differently (its own GREETING) and replaces the first once it answers (the rolling
// default); `spec.revision {active: first, canary: second, canaryPercent: 20}` (no new revision)
// runs both again and splits 1,000 requests 80/20 within ±5 points; `stickySessionTtl` keeps each
// client (its cookie) on one revision; GET …/revisions shows 80/20; dropping spec.revision sends
// everything to the newest and retires the other set. Idle, both revisions' replicas go to STANDBY
// on their own and requests resume both (the split comes back).
import { execFileSync } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zipOf } from '../../../apps/platform/src/planes/builds/test-archives.js';
import type { RunningPlatform } from '../support/platform.js';
import { removeRunWorkloads } from '../support/run-workloads.js';
import {
  engineIds,
  hostLeftovers,
  IMAGE_CACHE,
  json,
  missingBuildCapability,
  removeHome,
  RUNC_ROOT,
  startSandboxPlatform,
  waitFor,
} from '../sandboxes/support.js';
import { APP_MEMBERS, type Echo } from './app-image.js';

const skip = missingBuildCapability();

/** What runc says of a container: running, paused (frozen: STANDBY), or gone. */
function runcState(id: string): string {
  try {
    const out = execFileSync('runc', ['--root', RUNC_ROOT, 'state', id], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return (JSON.parse(out) as { status: string }).status;
  } catch {
    return 'gone';
  }
}

interface Agent {
  metadata: Record<string, unknown>;
  spec: { runtime: Record<string, unknown>; revision?: Record<string, unknown> };
  status: string;
  events: Array<{ status: string; message: string }>;
}
interface Revision {
  id: string;
  active: boolean;
  canary: boolean;
  trafficPercent: number;
}

describe.skipIf(skip !== null)(
  `run plane: revisions and canary traffic${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    let p: RunningPlatform;
    let workspaceId = '';
    const ids = new Set<string>();
    const api = (path: string, init: RequestInit = {}) => p.api(path, init);
    const agent = async () => json<Agent>(await api('/v0/agents/canary'));
    const until = (statuses: string[], ms = 120_000) =>
      waitFor(
        `agents/canary in ${statuses.join('|')}`,
        async () => {
          const r = await agent();
          return statuses.includes(r.status) ? r : undefined;
        },
        ms,
      );
    const put = async (runtime: Record<string, unknown>, revision?: Record<string, unknown>) => {
      const cur = await agent();
      const spec = { ...cur.spec, runtime: { ...cur.spec.runtime, ...runtime } };
      delete spec.revision;
      const res = await api('/v0/agents/canary', {
        method: 'PUT',
        body: JSON.stringify({ metadata: cur.metadata, spec: revision ? { ...spec, revision } : spec }),
      });
      expect(res.status, await res.clone().text()).toBe(200);
    };
    const greeting = (v: string) => ({ envs: [{ name: 'GREETING', value: v }] });
    const ask = (cookie?: string) =>
      fetch(`${p.credentials.runUrl}/${p.credentials.workspace}/agents/canary`, {
        method: 'POST',
        headers: { authorization: `Bearer ${p.credentials.apiKey}`, ...(cookie ? { cookie } : {}) },
        body: '{}',
      });
    const revisions = async () => json<Revision[]>(await api('/v0/agents/canary/revisions'));
    /** Containers of the canary agent (its engine ids share the record's digest). */
    let prefix = '';
    const containers = () => engineIds(p.home).filter((id) => prefix && id.startsWith(prefix));

    beforeAll(async () => {
      p = await startSandboxPlatform({
        env: {
          TARMAC_BRIDGE: 'tarmacrv0',
          TARMAC_SUBNET: '10.110.0.0/16',
          TARMAC_RUN_READY_TIMEOUT_SECONDS: '20',
          TARMAC_RUN_HOLD_SECONDS: '90',
        },
      });
      workspaceId =
        (await json<{ id?: string }>(await api(`/v0/workspaces/${p.credentials.workspace}`))).id ?? '';
      const open = await api('/v0/agents?upload=true', {
        method: 'POST',
        body: JSON.stringify({
          metadata: { name: 'canary' },
          spec: { runtime: { memory: 256, ...greeting('v1') } },
        }),
      });
      expect(open.status, await open.clone().text()).toBe(200);
      const upload = await fetch(open.headers.get('x-blaxel-upload-url')!, {
        method: 'PUT',
        body: zipOf(APP_MEMBERS),
        headers: { 'content-type': 'application/zip' },
      });
      expect(upload.status, await upload.clone().text()).toBe(200);
      const built = await until(['DEPLOYED', 'FAILED'], 6 * 60_000);
      expect(built.status, JSON.stringify(built.events)).toBe('DEPLOYED');
      const logs = await json<{ replica: string }>(await api('/v0/agents/canary/replicas/logs'));
      prefix = logs.replica.split('-').slice(0, 2).join('-');
    }, 10 * 60_000);

    afterAll(async () => {
      if (!p) return;
      for (const id of engineIds(p.home)) ids.add(id);
      await removeRunWorkloads(p).catch(() => undefined);
      const left = engineIds(p.home);
      await p.stop();
      expect(left).toEqual([]);
      expect(hostLeftovers([...ids])).toEqual([]);
      if (workspaceId) {
        for (const d of readdirSync(IMAGE_CACHE)) {
          if (decodeURIComponent(d).startsWith(`ws-${workspaceId}/`))
            rmSync(join(IMAGE_CACHE, d), { recursive: true, force: true });
        }
      }
      removeHome(p.home);
    }, 180_000);

    it('a runtime change makes a revision that replaces the previous one once it answers', async () => {
      expect((await json<Echo>(await ask())).env.GREETING).toBe('v1');
      const first = containers();
      expect(first).toHaveLength(1);
      await put(greeting('v2'));
      await until(['DEPLOYED']);
      expect((await json<Echo>(await ask())).env.GREETING).toBe('v2');
      await waitFor(
        'the first revision retired',
        async () => (containers().some((c) => first.includes(c)) ? undefined : true),
        30_000,
      );
      const list = await revisions();
      expect(list[0]).toMatchObject({ active: true, trafficPercent: 100 });
      expect(list.slice(1).every((r) => r.trafficPercent === 0)).toBe(true);
    }, 180_000);

    it('an 80/20 canary splits 1,000 requests within ±5 points and the revisions list shows 80/20', async () => {
      const [second, first] = await revisions();
      // A change of spec.revision alone: no new revision; the first one runs again beside the second.
      await put({}, { active: first!.id, canary: second!.id, canaryPercent: 20, stickySessionTtl: 600 });
      const deployed = await until(['DEPLOYED']);
      expect(deployed.events.at(-1)?.message).toContain(`revision ${first!.id}, 80% of the traffic`);
      expect(deployed.events.at(-1)?.message).toContain(`revision ${second!.id}, 20% of the traffic`);
      const list = await revisions();
      expect(list.map((r) => r.id).slice(0, 2)).toEqual([second!.id, first!.id]);
      expect(list[0]).toMatchObject({ canary: true, active: false, trafficPercent: 20 });
      expect(list[1]).toMatchObject({ canary: false, active: true, trafficPercent: 80 });
      expect(containers()).toHaveLength(2);
      const counts = { v1: 0, v2: 0 };
      let next = 0;
      const worker = async () => {
        while (next < 1000) {
          next++;
          const res = await ask();
          expect(res.status).toBe(200);
          counts[(await json<Echo>(res)).env.GREETING as 'v1' | 'v2']++;
        }
      };
      await Promise.all(Array.from({ length: 16 }, worker));
      console.log(`canary split over 1,000 requests: ${JSON.stringify(counts)}`);
      expect(counts.v1 + counts.v2).toBe(1000);
      expect(Math.abs(counts.v1 / 10 - 80), JSON.stringify(counts)).toBeLessThanOrEqual(5);
    }, 240_000);

    it('stickySessionTtl: each client stays on the revision of its cookie', async () => {
      const seen = new Set<string>();
      for (let client = 0; client < 12; client++) {
        const first = await ask();
        const setCookie = first.headers.get('set-cookie') ?? '';
        expect(setCookie).toMatch(
          new RegExp(
            `^tarmac-revision=[0-9a-f]{12}\\.\\d+; Max-Age=600; Path=/${p.credentials.workspace}/agents/canary;`,
          ),
        );
        const mine = (await json<Echo>(first)).env.GREETING!;
        const cookie = setCookie.split(';')[0]!;
        for (let i = 0; i < 15; i++) {
          const res = await ask(cookie);
          expect(res.headers.get('set-cookie')).toBeNull(); // held already: not set again
          expect((await json<Echo>(res)).env.GREETING).toBe(mine);
        }
        seen.add(mine);
      }
      // A forged cookie for a revision without traffic is not honoured: the split decides.
      const [, , oldest] = await revisions();
      if (oldest) {
        const forged = `tarmac-revision=${oldest.id}.${Math.floor(Date.now() / 1000) + 600}`;
        expect(['v1', 'v2']).toContain((await json<Echo>(await ask(forged))).env.GREETING);
      }
      expect(seen.size).toBeGreaterThan(0);
    }, 120_000);

    it('idle, each revision’s replica goes to STANDBY on its own; requests resume both and the split comes back', async () => {
      // The platform's default STANDBY window (30 s); the stop window (900 s) is not reached.
      const both = containers();
      expect(both).toHaveLength(2);
      await waitFor(
        'both revisions frozen',
        async () => (both.every((id) => runcState(id) === 'paused') ? true : undefined),
        60_000,
      );
      const seen = { v1: 0, v2: 0 };
      for (let i = 0; i < 60; i++) seen[(await json<Echo>(await ask())).env.GREETING as 'v1' | 'v2']++;
      // 80/20 over 60 draws: both appear (the chance that v2 never does is 0.8^60, 1.5e-6).
      expect(seen.v1, JSON.stringify(seen)).toBeGreaterThan(0);
      expect(seen.v2, JSON.stringify(seen)).toBeGreaterThan(0);
      expect(both.map(runcState)).toEqual(['running', 'running']); // resumed, the same containers
      expect(containers().sort()).toEqual([...both].sort());
    }, 120_000);

    it('dropping spec.revision sends everything to the newest revision and retires the other set', async () => {
      await put({});
      await until(['DEPLOYED']);
      await waitFor('one container left', async () => (containers().length === 1 ? true : undefined), 60_000);
      for (let i = 0; i < 20; i++) expect((await json<Echo>(await ask())).env.GREETING).toBe('v2');
      expect((await revisions()).map((r) => r.trafficPercent).slice(0, 2)).toEqual([100, 0]);
    }, 120_000);
  },
);
