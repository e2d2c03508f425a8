// The catalogue's view of agents and functions for the run plane (run-records.ts), over a real
// store: the revision a replica belongs to, the env of a replica (secrets opened, connection keys
// under their names, runtime.envs winning), and status writes that never overwrite a newer spec.
import { randomBytes } from 'node:crypto';
import type { FunctionSpec } from '@tarmac/contract';
import { functionSpecSchema } from '@tarmac/contract';
import type { Store } from '@tarmac/store';
import { testDatabases } from '@tarmac/store/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChangeFeed } from '../../../framework/change-feed.js';
import { DEFAULT_HOSTS } from '../../../framework/hosts.js';
import { SecretBox } from '../../../framework/secrets.js';
import { bootstrap } from '../../identity/bootstrap.js';
import { functionService } from '../functions/functions.routes.js';
import { ConnectionsService } from '../integrations/connections.service.js';
import { runRecords } from './run-records.js';

const db = testDatabases({})[0]!;

describe('run records', () => {
  let store: Store;
  let dispose: () => Promise<void>;
  let deps: ConstructorParameters<typeof ConnectionsService>[0];
  let ws: { name: string; accountId: string; role: 'admin' };

  beforeAll(async () => {
    ({ store, dispose } = await db.open());
    const id = await bootstrap(store, { mintKey: false, now: () => new Date() });
    ws = { name: id.workspace, accountId: id.accountId, role: 'admin' };
    deps = {
      store,
      feed: new ChangeFeed(),
      now: () => new Date(),
      secrets: new SecretBox(randomBytes(32)),
      hosts: DEFAULT_HOSTS,
      apiUrl: () => 'http://tarmac.test',
    };
  });
  afterAll(async () => dispose());

  it('opens secrets into the env: connection config and secret keys, runtime.envs last', async () => {
    await new ConnectionsService(deps, deps.apiUrl).create(ws, 'u', {
      metadata: { name: 'gh' },
      spec: {
        integration: 'github',
        config: { REGION: 'eu', SHARED: 'conn' },
        secret: { TOKEN: 's3cret' },
        sandbox: false,
      },
    });
    const fns = functionService(deps, deps.apiUrl);
    const spec: FunctionSpec = functionSpecSchema.parse({
      integrationConnections: ['gh'],
      runtime: {
        image: 'functions/f:1',
        envs: [
          { name: 'SHARED', value: 'mine' },
          { name: 'KEY', value: 'k', secret: true },
        ],
      },
    });
    await fns.create(ws, 'u', { metadata: { name: 'f' }, spec });
    const runs = runRecords(deps);
    const [f] = (await runs.list()).filter((r) => r.name === 'f');
    expect(f).toMatchObject({ kind: 'function', status: 'DEPLOYING', enabled: true, image: 'functions/f:1' });
    expect(f!.revision).toMatch(/^[0-9a-f]{12}$/);
    expect(await runs.envOf(f!)).toEqual({ REGION: 'eu', SHARED: 'mine', TOKEN: 's3cret', KEY: 'k' });
    // At rest the secrets stay sealed.
    const row = await store.resources.get(ws.name, 'function', 'f');
    expect(JSON.stringify(row!.spec)).not.toContain('"k"');
  });

  it('writes a status once, and never onto a newer revision or a changed enabled', async () => {
    const fns = functionService(deps, deps.apiUrl);
    const spec = functionSpecSchema.parse({ runtime: { image: 'functions/g:1' } });
    await fns.create(ws, 'u', { metadata: { name: 'g' }, spec });
    const runs = runRecords(deps);
    const find = async () => (await runs.list()).find((r) => r.name === 'g')!;
    const old = await find();
    expect(await runs.setStatus(old, 'DEPLOYED', 'up')).toBe(true);
    expect(await runs.setStatus(old, 'DEPLOYED', 'up again')).toBe(false); // same status: no event
    await fns.update(ws, 'u', 'g', { metadata: { name: 'g' }, spec: { ...spec, enabled: false } });
    // The replica of the old revision reports: the newer record (DEACTIVATING) is not touched.
    expect(await runs.setStatus(old, 'FAILED', 'late news')).toBe(false);
    const now = await find();
    expect(now).toMatchObject({ status: 'DEACTIVATING', enabled: false });
    expect(now.revision).toBe(old.revision); // enabled alone makes no revision (revision-traffic.ts)
    expect(await runs.setStatus(now, 'DEACTIVATED', 'stopped')).toBe(true);
    expect((await find()).lastMessage).toBe('stopped');
  });

  it('hands over the configured split: each revision with its share, own image and own envs', async () => {
    const fns = functionService(deps, deps.apiUrl);
    const specOf = (v: string, revision?: object) =>
      functionSpecSchema.parse({
        runtime: {
          image: `functions/h:${v}`,
          memory: v === 'v1' ? 256 : 512,
          envs: [{ name: 'VERSION', value: v, secret: true }],
        },
        ...(revision ? { revision } : {}),
      });
    await fns.create(ws, 'u', { metadata: { name: 'h' }, spec: specOf('v1') });
    await fns.update(ws, 'u', 'h', { metadata: { name: 'h' }, spec: specOf('v2') });
    const runs = runRecords(deps);
    const find = async () => (await runs.list()).find((r) => r.name === 'h')!;
    const before = await find();
    expect(before.traffic).toEqual([
      { revision: before.revision, percent: 100, image: 'functions/h:v2', memoryMB: 512 },
    ]);
    const [v2, v1] = (await fns.revisions(ws, 'h')).map((r) => r.id);
    const split = { active: v1, canary: v2, canaryPercent: 20, stickySessionTtl: 30 };
    await fns.update(ws, 'u', 'h', { metadata: { name: 'h' }, spec: specOf('v2', split) });
    const r = await find();
    expect(r.revision).toBe(before.revision); // a traffic change makes no revision
    expect(r.stickySessionTtl).toBe(30);
    expect(r.traffic).toEqual([
      { revision: v1, percent: 80, image: 'functions/h:v1', memoryMB: 256 },
      { revision: v2, percent: 20, image: 'functions/h:v2', memoryMB: 512 },
    ]);
    expect(await runs.envOf({ ...r, revision: v1! })).toEqual({ VERSION: 'v1' });
    expect(await runs.envOf({ ...r, revision: v2! })).toEqual({ VERSION: 'v2' });
    // A status computed before the split changed is not written over it.
    expect(await runs.setStatus(before, 'DEPLOYED', 'stale')).toBe(false);
    expect(await runs.setStatus(r, 'DEPLOYED', 'both answer')).toBe(true);
  });
});
