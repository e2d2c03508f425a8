// The platform the agents e2e files share (agents.test.ts, agents-lifecycle.test.ts): a real
// platform on its own bridge, the echo server (app-image.ts) built through the builds plane
// (?upload=true) and deployed as the agent `echo`, and a second workspace with a key of its own
// (not a member of ours). Registers the file's beforeAll/afterAll; the fields are set once
// beforeAll ran.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { zipOf } from '../../../apps/platform/src/planes/builds/test-archives.js';
import type { RunningPlatform } from '../support/platform.js';
import { closeRunPlatform } from '../support/run-workloads.js';
import { json, startSandboxPlatform, waitFor } from '../sandboxes/support.js';
import { APP_MEMBERS } from './app-image.js';

export const OTHER = 'rp-other';

export interface AgentRecord {
  status: string;
  spec: { runtime?: { image?: string } };
  events: Array<{ status: string; message: string }>;
}

export interface AgentsFixture {
  p: RunningPlatform;
  home: string;
  ws: string;
  /** The built echo image (`agents/echo:<tag>`). */
  image: string;
  workspaceId: string;
  /** An API key of the other workspace's service account. */
  otherKey: string;
  cliHome: string;
  /** Engine ids of every container seen (closeRunPlatform removes them at the end). */
  ids: Set<string>;
  /** Stops the platform and starts it again on the same home. */
  restart(): Promise<void>;
  /** A management call in our workspace. */
  api(path: string, init?: RequestInit): Promise<Response>;
  /** `{run_url}/{ws}/{path}` with our key, another key, or none (null). */
  run(path: string, init?: RequestInit, key?: string | null): Promise<Response>;
  record(kind: string, name: string): Promise<AgentRecord>;
  until(kind: string, name: string, statuses: string[], ms?: number): Promise<AgentRecord>;
  create(kind: string, name: string, spec: Record<string, unknown>): Promise<void>;
}

export function agentsFixture(net: { bridge: string; subnet: string }): AgentsFixture {
  const start = (home?: string) =>
    startSandboxPlatform({
      ...(home ? { home } : {}),
      env: {
        TARMAC_BRIDGE: net.bridge,
        TARMAC_SUBNET: net.subnet,
        TARMAC_RUN_READY_TIMEOUT_SECONDS: '8',
        TARMAC_RUN_HOLD_SECONDS: '90',
      },
    });
  const f: AgentsFixture = {
    p: undefined as unknown as RunningPlatform,
    home: '',
    ws: '',
    image: '',
    workspaceId: '',
    otherKey: '',
    cliHome: '',
    ids: new Set<string>(),
    async restart() {
      expect(await f.p.stop()).toBe(0);
      f.p = await start(f.home);
    },
    // Two workspaces: every management call names ours.
    api: (path, init = {}) =>
      f.p.api(path, {
        ...init,
        headers: { 'x-service-workspace': f.ws, ...(init.headers as Record<string, string>) },
      }),
    run: (path, init = {}, key = f.p.credentials.apiKey) =>
      fetch(`${f.p.credentials.runUrl}/${f.ws}/${path}`, {
        ...init,
        headers: {
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...(init.headers as Record<string, string>),
        },
      }),
    record: async (kind, name) => json<AgentRecord>(await f.api(`/v0/${kind}/${name}`)),
    until: (kind, name, statuses, ms = 120_000) =>
      waitFor(
        `${kind}/${name} in ${statuses.join('|')}`,
        async () => {
          const r = await f.record(kind, name);
          return statuses.includes(r.status) ? r : undefined;
        },
        ms,
      ),
    async create(kind, name, spec) {
      const res = await f.api(`/v0/${kind}`, {
        method: 'POST',
        body: JSON.stringify({ metadata: { name }, spec }),
      });
      expect(res.status, await res.clone().text()).toBe(200);
    },
  };

  beforeAll(async () => {
    f.cliHome = mkdtempSync(join(tmpdir(), 'tarmac-rpcli-'));
    f.p = await start();
    f.home = f.p.home;
    f.ws = f.p.credentials.workspace;
    f.workspaceId = (await json<{ id?: string }>(await f.api(`/v0/workspaces/${f.ws}`))).id ?? '';
    // Build the server through the builds plane: the agent record gets the image, then a replica.
    const open = await f.api('/v0/agents?upload=true', {
      method: 'POST',
      body: JSON.stringify({
        metadata: { name: 'echo' },
        spec: { runtime: { memory: 256, envs: [{ name: 'GREETING', value: 'hi', secret: true }] } },
      }),
    });
    expect(open.status, await open.clone().text()).toBe(200);
    const url = open.headers.get('x-blaxel-upload-url')!;
    const put = await fetch(url, {
      method: 'PUT',
      body: zipOf(APP_MEMBERS),
      headers: { 'content-type': 'application/zip' },
    });
    expect(put.status, await put.clone().text()).toBe(200);
    const built = await f.until('agents', 'echo', ['DEPLOYED', 'FAILED'], 6 * 60_000);
    expect(built.status, JSON.stringify(built.events)).toBe('DEPLOYED');
    f.image = built.spec.runtime?.image ?? '';
    expect(f.image).toMatch(/^agents\/echo:/);
    // A second workspace with a key of its own (a service account there): not a member of ours.
    const made = await f.p.api('/v0/workspaces', { method: 'POST', body: JSON.stringify({ name: OTHER }) });
    expect(made.status, await made.clone().text()).toBe(200);
    const inOther = { 'x-service-workspace': OTHER };
    const sa = await f.p.api('/v0/service_accounts', {
      method: 'POST',
      headers: inOther,
      body: JSON.stringify({ name: 'rp-bot', role: 'member' }),
    });
    expect(sa.status, await sa.clone().text()).toBe(200);
    const { client_id } = await json<{ client_id: string }>(sa);
    const key = await f.p.api(`/v0/service_accounts/${client_id}/api_keys`, {
      method: 'POST',
      headers: inOther,
      body: JSON.stringify({ name: 'rp-key' }),
    });
    expect(key.status, await key.clone().text()).toBe(200);
    f.otherKey = (await json<{ apiKey: string }>(key)).apiKey;
  }, 10 * 60_000);

  afterAll(async () => {
    if (!f.p) return;
    for (const kind of ['agents', 'functions']) {
      const list = await json<Array<{ metadata: { name: string } }>>(await f.api(`/v0/${kind}`)).catch(
        () => [],
      );
      for (const r of list) await f.api(`/v0/${kind}/${r.metadata.name}`, { method: 'DELETE' });
    }
    await closeRunPlatform(f.p, f.ids, f.workspaceId);
    if (f.cliHome) rmSync(f.cliHome, { recursive: true, force: true });
  }, 180_000);

  return f;
}
