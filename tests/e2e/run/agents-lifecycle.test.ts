// Issue 16, the run plane's lifecycle, end to end on the real platform, real buildah and real
// runc (the platform and the built echo agent: agents-fixture.ts): logs (route and CLI); a new
// revision replaces the replica only once it answers, a crashing one leaves the previous serving;
// one that dies after serving is restarted; a platform restart re-attaches the replica (same
// process, no new container); disable → DEACTIVATED and 503; delete removes it. Serving,
// access and isolation: agents.test.ts.
import { describe, expect, it, beforeAll } from 'vitest';
import { cliEnv, runCli } from '../cli/cli-runner.js';
import { engineIds, json, missingBuildCapability, waitFor } from '../sandboxes/support.js';
import { agentsFixture } from './agents-fixture.js';
import type { Echo } from './app-image.js';

const skip = missingBuildCapability();

describe.skipIf(skip !== null)(`run plane: agent lifecycle${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const f = agentsFixture({ bridge: 'tarmacrp5', subnet: '10.147.0.0/16' });
  const { api, run, record, until, create } = f;

  // What the tests below act on besides echo: a crashing agent (its archived logs), a public
  // agent (disabled at the end) and a function (deleted at the end).
  beforeAll(async () => {
    await create('agents', 'crasher', {
      runtime: { image: f.image, memory: 256, envs: [{ name: 'MODE', value: 'crash' }] },
    });
    await create('agents', 'open', { public: true, runtime: { image: f.image, memory: 256 } });
    await create('functions', 'tools', { runtime: { image: f.image, memory: 256 } });
    expect((await until('agents', 'crasher', ['FAILED', 'DEPLOYED'], 90_000)).status).toBe('FAILED');
    expect((await until('agents', 'open', ['DEPLOYED', 'FAILED'], 90_000)).status).toBe('DEPLOYED');
    expect((await until('functions', 'tools', ['DEPLOYED', 'FAILED'], 90_000)).status).toBe('DEPLOYED');
  }, 300_000);

  it('logs: the replica output through the logs route and `tarmac logs agent`', async () => {
    expect((await run('agents/echo', { method: 'POST', body: '{}' })).status).toBe(200); // a request to log
    const page = await json<{ replica: string; text: string; next: number }>(
      await api('/v0/agents/echo/replicas/logs'),
    );
    expect(page.replica).toMatch(/^rp-/);
    expect(page.text).toContain('listening on 0.0.0.0:8080');
    expect(page.text).toContain('request POST /');
    const crashed = await json<{ archived: string }>(await api('/v0/agents/crasher/replicas/logs'));
    expect(crashed.archived).toContain('boom: MODE=crash');
    const env = cliEnv({
      TARMAC_API_URL: f.p.url,
      TARMAC_API_KEY: f.p.credentials.apiKey,
      TARMAC_WORKSPACE: f.ws,
      TARMAC_HOME: f.cliHome,
    });
    const once = await runCli(['logs', 'agent', 'echo'], { env });
    expect(once.code, once.stderr).toBe(0);
    expect(once.stdout).toContain('listening on 0.0.0.0:8080');
    expect((await runCli(['logs', 'agent', 'nope'], { env })).code).not.toBe(0);
    // -f keeps following: a request made after it started shows up (then the test stops it).
    const following = runCli(['logs', 'agent', 'echo', '-f'], { env, timeoutMs: 6000 }).catch(
      (e: Error) => e,
    );
    await new Promise((r) => setTimeout(r, 2000));
    await run('agents/echo/after-follow', { method: 'POST', body: '{}' });
    const out = await following;
    expect(out).toBeInstanceOf(Error); // still following when stopped
    expect((out as Error).message).toContain('request POST /after-follow');
  }, 60_000);

  it('a new revision replaces the replica once it answers; a crashing revision leaves the previous serving', async () => {
    const put = async (envs: Array<{ name: string; value: string }>) => {
      const cur = await json<{ metadata: object; spec: { runtime: object } }>(await api('/v0/agents/echo'));
      const res = await api('/v0/agents/echo', {
        method: 'PUT',
        body: JSON.stringify({
          metadata: cur.metadata,
          spec: { ...cur.spec, runtime: { ...cur.spec.runtime, envs } },
        }),
      });
      expect(res.status, await res.clone().text()).toBe(200);
    };
    const ask = async () => json<Echo>(await run('agents/echo', { method: 'POST', body: '{}' }));
    const before = await ask();
    const replica = (await json<{ replica: string }>(await api('/v0/agents/echo/replicas/logs'))).replica;
    const ofEcho = () =>
      engineIds(f.home).filter((id) => id.startsWith(replica.split('-').slice(0, 2).join('-')));
    await put([{ name: 'MODE', value: 'crash' }]);
    const failed = await until('agents', 'echo', ['FAILED'], 90_000);
    expect(failed.events.at(-1)?.message).toContain('boom: MODE=crash');
    expect((await ask()).boot).toBe(before.boot); // the previous revision still answers
    await put([{ name: 'GREETING', value: 'v3' }]);
    await until('agents', 'echo', ['DEPLOYED'], 90_000);
    const after = await ask();
    expect(after.boot).not.toBe(before.boot);
    expect(after.env.GREETING).toBe('v3');
    // The previous revision's container (and any of the crashing one) goes.
    await waitFor('one container of echo', async () => (ofEcho().length === 1 ? true : undefined), 30_000);
    expect(ofEcho()).not.toContain(replica);
  }, 240_000);

  it('a replica that dies after serving is restarted (backoff); a request meanwhile is held, then served', async () => {
    const before = await json<Echo>(await run('agents/echo', { method: 'POST', body: '{}' }));
    expect((await run('agents/echo/exit', { method: 'POST' })).status).toBe(200);
    const restarting = await until('agents', 'echo', ['DEPLOYING'], 30_000);
    expect(restarting.events.at(-1)?.message).toMatch(
      /^Replica exited \(code 7\); restarting in 1 s; last log lines:\n[\s\S]*exiting on \/exit/,
    );
    const after = await json<Echo>(await run('agents/echo', { method: 'POST', body: '{}' })); // held, then served
    expect(after.boot).not.toBe(before.boot);
    expect((await until('agents', 'echo', ['DEPLOYED'], 60_000)).status).toBe('DEPLOYED');
  }, 120_000);

  it('a platform restart re-attaches the replica: same process, no new container', async () => {
    const replicaOf = async () =>
      (await json<{ replica: string }>(await api('/v0/agents/echo/replicas/logs'))).replica;
    const before = await json<Echo>(await run('agents/echo', { method: 'POST', body: 'x' }));
    const container = await replicaOf();
    // Every container of echo (the crash-looping agents' come and go; they are not compared).
    const ofEcho = () =>
      engineIds(f.home).filter((id) => id.startsWith(container.split('-').slice(0, 2).join('-')));
    expect(ofEcho()).toEqual([container]);
    for (const id of engineIds(f.home)) f.ids.add(id);
    await f.restart();
    const after = await json<Echo>(await run('agents/echo', { method: 'POST', body: 'y' }));
    expect(after.boot).toBe(before.boot);
    expect(await replicaOf()).toBe(container);
    expect(ofEcho()).toEqual([container]);
    expect((await record('agents', 'echo')).status).toBe('DEPLOYED');
  }, 180_000);

  it('enabled: false → DEACTIVATING (a stream in flight drains) → DEACTIVATED, 503 naming the state; delete removes the replica', async () => {
    const current = await json<{ metadata: object; spec: Record<string, unknown> }>(
      await api('/v0/agents/open'),
    );
    // A stream in flight when the agent is disabled runs to its end: the replica drains first.
    const streaming = await run('agents/open/stream', {}, null);
    expect(streaming.status).toBe(200);
    const put = await api('/v0/agents/open', {
      method: 'PUT',
      body: JSON.stringify({ metadata: current.metadata, spec: { ...current.spec, enabled: false } }),
    });
    expect(put.status, await put.clone().text()).toBe(200);
    expect((await json<{ status: string }>(put)).status).toBe('DEACTIVATING');
    expect((await streaming.text()).match(/^data: /gm)).toHaveLength(3);
    const off = await until('agents', 'open', ['DEACTIVATED'], 60_000);
    expect(off.events.map((e) => e.status)).toContain('DEACTIVATING');
    const refused = await run('agents/open', { method: 'POST', body: '{}' }, null);
    expect(refused.status).toBe(503);
    expect((await json<{ error: string }>(refused)).error).toBe(
      'agent open is DEACTIVATED (spec.enabled is false)',
    );
    const before = engineIds(f.home).filter((id) => id.startsWith('rp-')).length;
    const del = await api('/v0/functions/tools', { method: 'DELETE' });
    expect(del.status).toBe(200);
    await waitFor(
      'the function replica removed',
      async () => (engineIds(f.home).filter((id) => id.startsWith('rp-')).length < before ? true : undefined),
      30_000,
    );
    expect((await run('functions/tools/mcp', { method: 'POST', body: '{}' })).status).toBe(404);
  }, 120_000);
});
