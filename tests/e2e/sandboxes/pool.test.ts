// Issue 20 "What it must show": the warm pool. Creates that a pooled sandbox satisfies (no
// volumes, image and memory of a pooled shape) are DEPLOYED in the create's own response, and from
// inside the sandbox are the sandbox that was asked for: its name as hostname, its envs (a secret
// one too) in the processes it starts, its network policy at the egress proxy; billing starts at
// the claim. Two workspaces claiming from one pool see nothing of each other; the pool refills;
// a shape the pool does not hold boots the normal way. The orphan grace is 1 s, so a reaper that
// took pool members (no record yet) for orphans would empty the pool under this test.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../support/platform.js';
import { poolMembers, readyPoolMembers } from './pool-support.js';
import {
  cleanUp,
  engineIds,
  json,
  missingCapability,
  startSandboxPlatform,
  waitFor,
  type SandboxView,
} from './support.js';

const missing = missingCapability();
const POOL_MEMORY = 512;
const IMAGE = 'blaxel/base-image:latest';
const OTHER_WS = 'pool-other';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface ExecResult {
  exitCode: number;
  stdout: string | null;
}

describe.skipIf(missing !== null)(`warm pool${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let p: RunningPlatform | undefined;
  const made: { ws: string | undefined; name: string }[] = [];

  beforeAll(async () => {
    p = await startSandboxPlatform({
      env: {
        TARMAC_POOL: `${IMAGE}@${POOL_MEMORY}=2`,
        TARMAC_STANDBY_AFTER: '10m',
        TARMAC_ORPHAN_GRACE_SECONDS: '1',
        TARMAC_METERING_INTERVAL_SECONDS: '1',
        TARMAC_BRIDGE: 'tarmacpool0',
        TARMAC_SUBNET: '10.162.0.0/16',
      },
    });
    const res = await p.api('/v0/workspaces', { method: 'POST', body: JSON.stringify({ name: OTHER_WS }) });
    expect(res.status, await res.clone().text()).toBe(200);
  }, 15 * 60_000);

  afterAll(async () => {
    if (!p) return;
    // The caller has two workspaces: every call names one (cleanUp's helpers do not).
    for (const m of made)
      await api(m.ws, `/v0/sandboxes/${m.name}`, { method: 'DELETE' }).catch(() => undefined);
    for (const m of made) {
      await waitFor(
        `${m.name} gone`,
        async () => {
          const res = await api(m.ws, `/v0/sandboxes/${m.name}`).catch(() => undefined);
          if (!res) return undefined;
          const body = res.status === 200 ? await json<SandboxView>(res) : undefined;
          return res.status === 404 || body?.status === 'TERMINATED' ? true : undefined;
        },
        60_000,
      ).catch(() => undefined);
    }
    await cleanUp(p, []); // stops the platform (its unclaimed pool members go) and checks for leaks
  }, 180_000);

  function api(ws: string | undefined, path: string, init: RequestInit = {}) {
    const headers = new Headers(init.headers);
    headers.set('x-service-workspace', ws ?? p!.credentials.workspace);
    return p!.api(path, { ...init, headers });
  }

  async function waitSandbox(ws: string | undefined, name: string, ok: (s: SandboxView) => boolean) {
    return waitFor(`${name}`, async () => {
      const s = await json<SandboxView>(await api(ws, `/v0/sandboxes/${name}`));
      return ok(s) ? s : undefined;
    });
  }

  /** A command in the sandbox, through the gateway (path-style URL of its workspace). */
  async function run(ws: string | undefined, name: string, command: string): Promise<ExecResult> {
    const workspace = ws ?? p!.credentials.workspace;
    const res = await fetch(`${p!.url}/${workspace}/sandboxes/${name}/process`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p!.credentials.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ command, waitForCompletion: true, timeout: 30 }),
    });
    const body = await json<ExecResult>(res);
    expect(res.status, JSON.stringify(body)).toBe(200);
    return body;
  }

  /** Engine ids of pool members that are ready: labelled `pool-ready` (frozen, or the hot one). */
  const readyMembers = () => readyPoolMembers(p!.home);

  const poolFull = () =>
    waitFor('two ready pool members', async () => (readyMembers().length >= 2 ? true : undefined), 60_000);

  /**
   * The pool full and settled: one hot member (running), the others frozen — members are frozen
   * only once TARMAC_STANDBY_MIN_AGE (10 s) old (warm-pool.ts), so a young one runs too.
   */
  const poolSettled = () =>
    waitFor(
      'one hot member and the others frozen',
      async () => {
        const m = poolMembers(p!.home).filter((x) => x.ready);
        const paused = m.filter((x) => x.status === 'paused');
        return m.length >= 2 && paused.length === m.length - 1 ? m : undefined;
      },
      60_000,
    );

  async function create(ws: string | undefined, name: string | undefined, spec: Record<string, unknown>) {
    const sent = Date.now();
    const res = await api(ws, '/v0/sandboxes', {
      method: 'POST',
      body: JSON.stringify({ metadata: name ? { name } : {}, spec }),
    });
    const body = await json<SandboxView>(res);
    expect(res.status, JSON.stringify(body)).toBe(200);
    made.push({ ws, name: body.metadata.name });
    return { body, sent, answered: Date.now() };
  }

  const pooledSpec = (secret: string, forbidden: string) => ({
    runtime: {
      image: IMAGE,
      memory: POOL_MEMORY,
      envs: [
        { name: 'PLAIN_VAR', value: `plain-${secret}` },
        { name: 'SECRET_VAR', value: secret, secret: true },
      ],
    },
    network: { proxy: { forbiddenDomains: [forbidden] } },
  });

  async function expectOwnIdentity(ws: string | undefined, name: string, secret: string, forbidden: string) {
    const r = await run(
      ws,
      name,
      'echo "$(hostname) $(cat /proc/sys/kernel/hostname) $HOSTNAME $PLAIN_VAR $SECRET_VAR"',
    );
    expect(r.stdout?.trim()).toBe(`${name} ${name} ${name} plain-${secret} ${secret}`);
    // The egress proxy refuses the sandbox's forbidden domain: its own policy, found by its own
    // proxy credentials (record id), which the pool member carried from boot.
    const c = await run(ws, name, `curl -sS -m 10 -o /dev/null -w '%{http_code}' http://${forbidden}/x`);
    expect(c.stdout?.trim()).toBe('403');
  }

  it('serves a nameless and a named create from the pool, each with its own name, hostname, envs and policy, billed from the claim', async () => {
    await poolFull();
    await sleep(3000); // the members have existed for a while: billing from their boot would show
    const nameless = await create(undefined, undefined, pooledSpec('nameless-s3cret', 'nope-a.example'));
    const named = await create(undefined, 'pooled-named', pooledSpec('named-s3cret', 'nope-b.example'));
    for (const c of [nameless, named]) {
      expect(c.body.status).toBe('DEPLOYED'); // in the create's own response
      expect(c.body.events[0]?.message).toContain('warm pool');
    }
    expect(nameless.body.metadata.name).toMatch(/^sandbox-[0-9a-f]{8}$/);
    expect(named.body.metadata.name).toBe('pooled-named');
    await expectOwnIdentity(undefined, nameless.body.metadata.name, 'nameless-s3cret', 'nope-a.example');
    await expectOwnIdentity(undefined, 'pooled-named', 'named-s3cret', 'nope-b.example');

    // Billed from the claim: RUNNING starts at the claim's Deployment event, not at the boot.
    const s = await waitSandbox(undefined, 'pooled-named', (x) => x.status === 'DEPLOYED');
    const deployment = s.events.find((e) => e.type === 'Deployment' && e.status === 'DEPLOYED');
    expect(Date.parse(deployment!.time)).toBeGreaterThanOrEqual(named.sent - 5);
    expect(Date.parse(deployment!.time)).toBeLessThanOrEqual(named.answered + 5);
    await sleep(2500); // meter passes
    const hour = 3_600_000;
    const params = new URLSearchParams({
      startTime: new Date(Math.floor(named.sent / hour) * hour - hour).toISOString(),
      endTime: new Date(Math.floor(Date.now() / hour) * hour + hour).toISOString(),
      groupBy: 'resource_name,billing_dimension',
    });
    const res = await api(undefined, `/v0/accounts/${p!.credentials.accountId}/metrics?${params.toString()}`);
    const metrics = await json<{
      data: { resourceName?: string; billingDimension?: string; summary: { usage?: number } }[];
    }>(res);
    const compute = metrics.data.find(
      (e) => e.resourceName === 'pooled-named' && e.billingDimension === 'sandbox_compute_runtime_gbs',
    );
    expect(compute, JSON.stringify(metrics.data)).toBeDefined();
    const gb = POOL_MEMORY / 1024;
    expect(compute!.summary.usage!).toBeLessThanOrEqual((gb * (Date.now() - named.sent)) / 1000 + 0.5);
  }, 180_000);

  it('keeps one ready member thawed (hot) and the others frozen once 10 s old, serves the next create from the hot one, and thaws a frozen one in its place', async () => {
    const members = await poolSettled();
    const hot = members.filter((m) => m.status === 'running');
    const frozen = members.filter((m) => m.status === 'paused');
    expect(hot.length, JSON.stringify(members)).toBe(1);
    // Thawed is not served: before its claim nothing reaches it through the gateway.
    const early = await fetch(`${p!.url}/${p!.credentials.workspace}/sandboxes/${hot[0]!.id}/health`, {
      headers: { authorization: `Bearer ${p!.credentials.apiKey}` },
    });
    expect(early.status).toBe(404);
    const c = await create(undefined, 'pool-hot', pooledSpec('hot-s3cret', 'nope-e.example'));
    expect(c.body.status).toBe('DEPLOYED');
    expect(c.body.events[0]?.message).toContain('warm pool');
    // The hot member was the one claimed (relabelled as the sandbox's); the frozen ones were not.
    const left = poolMembers(p!.home).map((m) => m.id);
    expect(left).not.toContain(hot[0]!.id);
    for (const f of frozen) expect(left).toContain(f.id);
    await expectOwnIdentity(undefined, 'pool-hot', 'hot-s3cret', 'nope-e.example');
    // A frozen member is thawed in its place.
    await waitFor(
      'a frozen member made hot',
      async () =>
        poolMembers(p!.home).find(
          (x) => x.ready && x.status === 'running' && frozen.some((f) => f.id === x.id),
        ),
      60_000,
    );
    // The refill's new member is ready at once but not frozen while younger than 10 s; then it is.
    const fresh = await waitFor(
      "the refill's new member, ready",
      async () => poolMembers(p!.home).find((x) => x.ready && !members.some((m) => m.id === x.id)),
      60_000,
    );
    expect(fresh.status, 'a member younger than the minimum age is not frozen').toBe('running');
    await waitFor(
      'the new member frozen once 10 s old',
      async () =>
        poolMembers(p!.home).find((x) => x.id === fresh.id)?.status === 'paused' ? true : undefined,
      30_000,
    );
  }, 180_000);

  it('two workspaces claiming from one pool see nothing of each other; the pool refills', async () => {
    await poolFull();
    const a = await create(undefined, 'pool-ws-a', pooledSpec('a-s3cret', 'nope-c.example'));
    expect(a.body.events[0]?.message).toContain('warm pool');
    await run(
      undefined,
      'pool-ws-a',
      'echo from-a > /tmp/left-by-a; sleep 4242 > /dev/null 2>&1 < /dev/null & true',
    );
    const b = await create(OTHER_WS, 'pool-ws-b', pooledSpec('b-s3cret', 'nope-d.example'));
    expect(b.body.events[0]?.message).toContain('warm pool');
    await expectOwnIdentity(OTHER_WS, 'pool-ws-b', 'b-s3cret', 'nope-d.example');
    const seen = await run(
      OTHER_WS,
      'pool-ws-b',
      'ls /tmp; ps -eo args; env; cat /proc/1/environ | tr "\\0" "\\n"; hostname',
    );
    const out = seen.stdout ?? '';
    expect(out).not.toContain('left-by-a');
    expect(out).not.toContain('sleep 4242');
    expect(out).not.toContain('a-s3cret');
    expect(out).not.toContain('pool-ws-a');
    // And the other way round: A's sandbox holds nothing of B's.
    const back = (await run(undefined, 'pool-ws-a', 'ls /tmp; ps -eo args; env; hostname')).stdout ?? '';
    expect(back).not.toContain('b-s3cret');
    expect(back).not.toContain('pool-ws-b');
    // The claimed sandbox's own user cannot claim it again (through the gateway, which adds the
    // sandbox token): the env its processes get stays the one the claim set.
    const reclaim = await fetch(`${p!.url}/${p!.credentials.workspace}/sandboxes/pool-ws-a/_tarmac/claim`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p!.credentials.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ env: { HOSTNAME: 'pool-ws-b', SECRET_VAR: 'stolen' } }),
    });
    expect(reclaim.status).toBe(409);
    expect((await run(undefined, 'pool-ws-a', 'echo "$HOSTNAME $SECRET_VAR"')).stdout?.trim()).toBe(
      'pool-ws-a a-s3cret',
    );
    // The pool boots new members in the background; none of the claimed ones came back to it.
    await poolFull();
    expect(readyMembers().length).toBe(2);
  }, 180_000);

  it('boots a shape the pool does not hold the normal way', async () => {
    const c = await create(undefined, 'not-pooled', { runtime: { image: IMAGE, memory: 256 } });
    expect(c.body.status).toBe('DEPLOYING');
    const s = await waitSandbox(
      undefined,
      'not-pooled',
      (x) => x.status === 'DEPLOYED' || x.status === 'FAILED',
    );
    expect(s.status, JSON.stringify(s.events)).toBe('DEPLOYED');
    expect(s.events.map((e) => e.message).join('\n')).not.toContain('warm pool');
    expect((await run(undefined, 'not-pooled', 'hostname')).stdout?.trim()).toBe('not-pooled');
    // A sandbox that was not pooled has no claim route at all (its user cannot rewrite its env).
    const claim = await fetch(`${p!.url}/${p!.credentials.workspace}/sandboxes/not-pooled/_tarmac/claim`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p!.credentials.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ env: { HOSTNAME: 'other' } }),
    });
    expect(claim.status).toBe(404);
  }, 120_000);

  it('boots the sandbox the normal way when the member it claimed died: no record of the member, none left of it', async () => {
    // The member a create claims first (the hot one), killed behind the platform's back: its
    // claim fails at the end (not running), after its record was written.
    const hot = (await poolSettled()).find((m) => m.status === 'running');
    expect(hot).toBeDefined();
    spawnSync('runc', ['--root', '/run/tarmac/runc', 'kill', hot!.id, 'KILL']);
    // `runc kill` returns once the signal is sent; the init's exit (its memory torn down) comes
    // after. A claim in between finds it alive (the platform sees what a dead member looks like only
    // after it is dead): wait for runc to call it stopped.
    await waitFor('the killed member stopped', async () =>
      poolMembers(p!.home).find((m) => m.id === hot!.id)?.status === 'stopped' ? true : undefined,
    );
    const c = await create(undefined, 'pool-dead-member', pooledSpec('dead-s3cret', 'nope-f.example'));
    expect(c.body.status).toBe('DEPLOYING');
    expect(c.body.events.map((e) => e.message).join('\n')).not.toContain('warm pool');
    expect(p!.output()).toContain('claiming a pooled sandbox failed'); // claimed, then undone
    const s = await waitSandbox(
      undefined,
      'pool-dead-member',
      (x) => x.status === 'DEPLOYED' || x.status === 'FAILED',
    );
    expect(s.status, JSON.stringify(s.events)).toBe('DEPLOYED');
    await expectOwnIdentity(undefined, 'pool-dead-member', 'dead-s3cret', 'nope-f.example');
    // The dead member is destroyed, not handed to anyone; the pool refills.
    await waitFor('the dead member removed', async () =>
      existsSync(join(p!.home, 'sandboxes', hot!.id)) ? undefined : true,
    );
    const list = await json<{ data?: SandboxView[] } | SandboxView[]>(await api(undefined, '/v0/sandboxes'));
    const names = (Array.isArray(list) ? list : (list.data ?? [])).map((x) => x.metadata.name);
    expect(names.filter((n) => n === 'pool-dead-member')).toHaveLength(1);
    await poolFull();
  }, 180_000);
});

describe.skipIf(missing !== null)(
  `warm pool under memory pressure${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    let p: RunningPlatform | undefined;
    const hostMB = Math.floor(totalmem() / 1024 / 1024);

    beforeAll(async () => {
      p = await startSandboxPlatform({
        env: {
          TARMAC_POOL: `${IMAGE}@${POOL_MEMORY}=2`,
          TARMAC_STANDBY_AFTER: '10m',
          // Room for the two pool members and 612 MB more: a 1024 MB sandbox fits only if a member goes.
          TARMAC_MEMORY_OVERCOMMIT: String((2 * POOL_MEMORY + 612) / hostMB),
          TARMAC_BRIDGE: 'tarmacpool1',
          TARMAC_SUBNET: '10.163.0.0/16',
        },
      });
    }, 15 * 60_000);

    afterAll(() => cleanUp(p, ['needs-room']), 180_000);

    it('releases pool members first when a create needs their memory', async () => {
      const members = () =>
        engineIds(p!.home).filter((id) => {
          try {
            const rec = JSON.parse(readFileSync(join(p!.home, 'sandboxes', id, 'sandbox.json'), 'utf8')) as {
              labels: Record<string, string>;
            };
            return rec.labels.pool !== undefined;
          } catch {
            return false; // being made: no sandbox.json yet
          }
        });
      await waitFor('two pool members', async () => (members().length >= 2 ? true : undefined), 60_000);
      await sleep(1500); // both ready and counted
      const res = await p!.api('/v0/sandboxes', {
        method: 'POST',
        body: JSON.stringify({
          metadata: { name: 'needs-room' },
          spec: { runtime: { image: IMAGE, memory: 1024 } },
        }),
      });
      expect(res.status, await res.clone().text()).toBe(200);
      const s = await waitFor('needs-room settled', async () => {
        const body = await json<SandboxView>(await p!.api('/v0/sandboxes/needs-room'));
        return body.status === 'DEPLOYED' || body.status === 'FAILED' ? body : undefined;
      });
      expect(s.status, JSON.stringify(s.events)).toBe('DEPLOYED');
      expect(members().length).toBeLessThan(2);
    }, 180_000);
  },
);
