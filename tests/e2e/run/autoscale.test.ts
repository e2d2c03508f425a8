// Issue 16 "Scaling and revisions", end to end on the real platform, real buildah and real runc,
// with short autoscaler windows (stable 6 s, panic 2 s) and a target of one request per replica:
// a burst of slow requests scales an agent with maxScale 3 past one replica up to three — never
// more — which all serve, and back to its first replica once a stable window passed without the
// burst (not before); minScale 2 keeps two replicas with no traffic past the stable window;
// while two run, threads (X-Service-Thread-Id) each see their own in-process history, spread over
// both; MCP sessions stay on the replica that made them (the official MCP client).
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
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
  startSandboxPlatform,
  waitFor,
} from '../sandboxes/support.js';
import { APP_MEMBERS } from './app-image.js';

const skip = missingBuildCapability();
const STABLE_S = 6;

describe.skipIf(skip !== null)(
  `run plane: autoscaling and thread stickiness${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    let p: RunningPlatform;
    let ws = '';
    let image = '';
    let workspaceId = '';
    const ids = new Set<string>();
    const api = (path: string, init: RequestInit = {}) =>
      p.api(path, {
        ...init,
        headers: { 'x-service-workspace': ws, ...(init.headers as Record<string, string>) },
      });
    const run = (path: string, init: RequestInit = {}) =>
      fetch(`${p.credentials.runUrl}/${ws}/${path}`, {
        ...init,
        headers: {
          authorization: `Bearer ${p.credentials.apiKey}`,
          ...(init.headers as Record<string, string>),
        },
      });
    const status = async (kind: string, name: string) =>
      await json<{ status: string; events: Array<{ message: string }> }>(await api(`/v0/${kind}/${name}`));
    const deployed = (kind: string, name: string, ms = 120_000) =>
      waitFor(
        `${kind}/${name} DEPLOYED`,
        async () => {
          const r = await status(kind, name);
          if (r.status === 'FAILED') throw new Error(JSON.stringify(r.events));
          return r.status === 'DEPLOYED' ? r : undefined;
        },
        ms,
      );
    /** The record's containers on the engine (replica engine ids share `rp-<record digest>`). */
    const containersOf = async (kind: string, name: string) => {
      const one = (await json<{ replica: string }>(await api(`/v0/${kind}/${name}/replicas/logs`))).replica;
      const prefix = one.split('-').slice(0, 2).join('-') + '-';
      return () => {
        const now = engineIds(p.home).filter((id) => id.startsWith(prefix));
        for (const id of now) ids.add(id);
        return now;
      };
    };
    const slow = async (name: string, ms: number) => {
      const res = await run(`agents/${name}/slow?ms=${ms}`);
      expect(res.status).toBe(200);
      return (await json<{ boot: string }>(res)).boot;
    };
    /** The controller's sizing decisions for a record, from the platform's log (replica-scaling.ts). */
    const decisions = (name: string) =>
      p
        .output()
        .split('\n')
        .filter((l) => l.includes('"replica set sized"'))
        .map((l) => JSON.parse(l) as { time: number; record: string; desired: number; panicking: boolean })
        .filter((d) => d.record === name);
    const create = async (kind: string, name: string, spec: Record<string, unknown>) => {
      const res = await api(`/v0/${kind}`, {
        method: 'POST',
        body: JSON.stringify({ metadata: { name }, spec }),
      });
      expect(res.status, await res.clone().text()).toBe(200);
    };

    beforeAll(async () => {
      p = await startSandboxPlatform({
        env: {
          TARMAC_BRIDGE: 'tarmacas0',
          TARMAC_SUBNET: '10.100.0.0/16',
          TARMAC_RUN_READY_TIMEOUT_SECONDS: '30',
          TARMAC_RUN_HOLD_SECONDS: '90',
          TARMAC_RUN_TARGET_CONCURRENCY: '1',
          TARMAC_RUN_STABLE_WINDOW_SECONDS: String(STABLE_S),
          TARMAC_RUN_PANIC_WINDOW_SECONDS: '2',
          TARMAC_LOG_LEVEL: 'info', // the sizing decisions are read from the log
        },
      });
      ws = p.credentials.workspace;
      workspaceId = (await json<{ id?: string }>(await api(`/v0/workspaces/${ws}`))).id ?? '';
      const open = await api('/v0/agents?upload=true', {
        method: 'POST',
        body: JSON.stringify({
          metadata: { name: 'burst' },
          spec: { runtime: { memory: 256, minScale: 0, maxScale: 3 } },
        }),
      });
      expect(open.status, await open.clone().text()).toBe(200);
      const put = await fetch(open.headers.get('x-blaxel-upload-url')!, {
        method: 'PUT',
        body: zipOf(APP_MEMBERS),
        headers: { 'content-type': 'application/zip' },
      });
      expect(put.status, await put.clone().text()).toBe(200);
      await deployed('agents', 'burst', 6 * 60_000);
      image = (await json<{ spec: { runtime: { image: string } } }>(await api('/v0/agents/burst'))).spec
        .runtime.image;
      expect(image).toMatch(/^agents\/burst:/);
    }, 10 * 60_000);

    afterAll(async () => {
      if (!p) return;
      const removed = await removeRunWorkloads(p).then(
        () => true,
        (e: Error) => e.message,
      );
      for (const id of engineIds(p.home)) ids.add(id);
      await p.stop();
      expect(removed).toBe(true);
      expect(hostLeftovers([...ids])).toEqual([]);
      if (workspaceId) {
        for (const d of readdirSync(IMAGE_CACHE)) {
          if (decodeURIComponent(d).startsWith(`ws-${workspaceId}/`))
            rmSync(join(IMAGE_CACHE, d), { recursive: true, force: true });
        }
      }
      removeHome(p.home);
    }, 180_000);

    it('a burst of slow requests scales past one replica up to maxScale (never more), all serving, and back after the stable window', async () => {
      const containers = await containersOf('agents', 'burst');
      const first = containers();
      expect(first).toHaveLength(1); // minScale 0: one replica while in use (zero is STANDBY's part)
      let most = 0;
      const watch = setInterval(() => (most = Math.max(most, containers().length)), 100);
      try {
        const boots = new Set<string>();
        const start = Date.now();
        // Six requests of 14 s at a target of one per replica: the panic window asks for 6 → 3.
        const burst = Array.from({ length: 6 }, () => slow('burst', 14_000).then((b) => boots.add(b)));
        await waitFor(
          'three replicas of burst',
          async () => (containers().length >= 3 ? true : undefined),
          20_000,
        );
        const scaledInMs = Date.now() - start;
        // The new replicas serve: a pair of requests goes to the two least busy (the new ones).
        await waitFor(
          'two new processes answering',
          async () => {
            const pair = await Promise.all([slow('burst', 300), slow('burst', 300)]);
            for (const b of pair) boots.add(b);
            return boots.size >= 3 ? true : undefined;
          },
          30_000,
        );
        await Promise.all(burst);
        const ended = Date.now();
        expect(boots.size).toBe(3);
        expect(scaledInMs).toBeLessThan(10_000); // "scale-up on bursts within seconds"
        expect((await status('agents', 'burst')).status).toBe('DEPLOYED');
        // Back to one, keeping the first replica (lowest slot), once a stable window had no burst.
        await waitFor(
          'burst back to one replica',
          async () => (containers().length === 1 ? true : undefined),
          90_000,
        );
        expect(containers()).toEqual(first);
        expect(most).toBe(3); // never above maxScale
        const sized = decisions('burst');
        expect(Math.max(...sized.map((d) => d.desired))).toBe(3);
        expect(sized.some((d) => d.desired === 3 && d.panicking)).toBe(true);
        // The first step down came a stable window after the burst (a pass is 1 s; not the 2 s
        // panic window): panic holds while the burst lasts and for a stable window after it.
        const top = sized.findIndex((d) => d.desired === 3);
        const down = sized.slice(top).find((d) => d.desired < 3)!;
        expect(down.time - ended).toBeGreaterThanOrEqual((STABLE_S - 2) * 1000);
        console.info(
          `burst: 3 replicas ${scaledInMs} ms after it began; first step down ${down.time - ended} ms after it ended`,
        );
        // The survivor still answers, and the record never left DEPLOYED.
        await slow('burst', 0);
        expect((await status('agents', 'burst')).status).toBe('DEPLOYED');
      } finally {
        clearInterval(watch);
      }
    }, 240_000);

    it('minScale 2 keeps two replicas without traffic; threads each see their own history across them', async () => {
      await create('agents', 'memory', { runtime: { image, memory: 256, minScale: 2, maxScale: 3 } });
      await deployed('agents', 'memory');
      const containers = await containersOf('agents', 'memory');
      const boots = new Set<string>();
      await waitFor(
        'two processes of memory answering',
        async () => {
          for (const b of await Promise.all([slow('memory', 300), slow('memory', 300)])) boots.add(b);
          return boots.size >= 2 ? true : undefined;
        },
        60_000,
      );
      expect(containers()).toHaveLength(2);
      // Idle for longer than a stable window: minScale holds (the floor is 2, not 1).
      await new Promise((r) => setTimeout(r, (STABLE_S + 3) * 1000));
      expect(containers()).toHaveLength(2);
      // Ten threads, three rounds, every round all threads at once.
      const say = async (thread: string, text: string) =>
        json<{ history: string[]; boot: string }>(
          await run('agents/memory/chat', {
            method: 'POST',
            headers: { 'x-service-thread-id': thread },
            body: text,
          }),
        );
      const threads = Array.from({ length: 10 }, (_, i) => `thread-${i}`);
      const homes = new Map<string, Set<string>>();
      for (let round = 1; round <= 3; round++) {
        const answers = await Promise.all(threads.map((t) => say(t, `${t}/${round}`)));
        answers.forEach((a, i) => {
          const t = threads[i]!;
          expect(a.history).toEqual(Array.from({ length: round }, (_, k) => `${t}/${k + 1}`));
          homes.set(t, (homes.get(t) ?? new Set()).add(a.boot));
        });
      }
      for (const [t, home] of homes) expect(home.size, t).toBe(1); // one process per thread
      const used = new Set([...homes.values()].flatMap((h) => [...h]));
      expect(used.size).toBe(2); // the threads are spread over both replicas
      // X-Blaxel-Thread-Id is the same thread to the platform (the test's server keys its memory
      // on X-Service-Thread-Id only, so the alias is checked by the process that answers).
      for (const t of threads) {
        const alias = await json<{ boot: string }>(
          await run('agents/memory/chat', {
            method: 'POST',
            headers: { 'x-blaxel-thread-id': t },
            body: 'b',
          }),
        );
        expect(alias.boot, t).toBe([...homes.get(t)!][0]);
      }
      expect(containers()).toHaveLength(2);
    }, 180_000);

    it('MCP sessions stay on the replica that made them (pinned from its answer), with two replicas', async () => {
      await create('functions', 'tools', { runtime: { image, memory: 256, minScale: 2, maxScale: 2 } });
      await deployed('functions', 'tools');
      const containers = await containersOf('functions', 'tools');
      await waitFor(
        'two replicas of tools',
        async () => (containers().length === 2 ? true : undefined),
        60_000,
      );
      const url = new URL(`${p.credentials.runUrl}/${ws}/functions/tools/mcp`);
      // Eight sessions: unpinned, a session's later requests would land on the other replica about
      // half the time (rendezvous); the made-here pin keeps every one where initialize ran.
      for (let i = 0; i < 8; i++) {
        const transport = new StreamableHTTPClientTransport(url, {
          requestInit: { headers: { authorization: `Bearer ${p.credentials.apiKey}` } },
        });
        const client = new Client({ name: `e2e-${i}`, version: '1.0.0' });
        await client.connect(transport);
        try {
          const madeBy = client.getServerVersion()!.version.replace(/^1\.0\.0-/, '');
          for (let k = 0; k < 3; k++) {
            const out = (await client.callTool({ name: 'whoami', arguments: {} })) as {
              content: Array<{ text: string }>;
            };
            const seen = JSON.parse(out.content[0]!.text) as { boot: string; session: string };
            expect(seen).toEqual({ boot: madeBy, session: transport.sessionId, token: null });
          }
        } finally {
          await client.close();
        }
      }
    }, 180_000);
  },
);
