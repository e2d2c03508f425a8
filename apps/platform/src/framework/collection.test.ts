import { testDatabases } from '@tarmac/store/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ResourceCollection } from './collection.js';
import { newEvent } from './events.js';
import { DEFAULT_HOSTS } from './hosts.js';
import { SecretBox } from './secrets.js';
import { openTestPlatform, type TestPlatform } from './test-support/platform-harness.js';

describe.each(testDatabases(process.env))('ResourceCollection ($name)', (database) => {
  let p: TestPlatform;
  let col: ResourceCollection<{ n: number }>;
  beforeEach(async () => {
    p = await openTestPlatform(database);
    col = new ResourceCollection(
      {
        store: p.store,
        feed: p.feed,
        now: () => new Date(),
        secrets: new SecretBox(p.secretKey),
        hosts: DEFAULT_HOSTS,
        apiUrl: () => 'http://x',
      },
      'widget',
      'Widget',
    );
    p.feed.subscribe('widget', (ref) => p.notices.push(ref));
    await col.create({
      workspace: 'default',
      name: 'w',
      actor: 'u',
      displayName: null,
      externalId: null,
      labels: {},
      spec: { n: 1 },
      status: 'DEPLOYING',
      event: newEvent(undefined, 'created', 'DEPLOYING', 'made', new Date()),
    });
  });
  afterEach(async () => {
    await p.dispose();
  });

  it('mutate re-reads and re-applies when a controller wrote in between, keeping both writes', async () => {
    let calls = 0;
    const row = await col.mutate('default', 'w', 'api', async (current) => {
      calls += 1;
      // A "controller" writes status between this read and the API's write, on the first try only.
      if (calls === 1) await p.store.resources.update(current.id, { status: 'DEPLOYED' }, current.revision);
      return {
        patch: { spec: { n: current.spec.n + 1 } },
        event: newEvent(current, 'updated', current.status ?? '', 'spec changed', new Date()),
      };
    });
    expect(calls).toBe(2);
    expect(row.status).toBe('DEPLOYED');
    expect(row.spec).toEqual({ n: 2 });
    expect(row.revision).toBe(3);
    expect(row.events.at(-1)).toMatchObject({ type: 'updated', status: 'DEPLOYED', revision: '3' });
  });

  it('update without mutate reports a lost race as a 409, writing nothing', async () => {
    const stale = await col.get('default', 'w');
    await p.store.resources.update(stale.id, { status: 'DEPLOYED' });
    await expect(col.update(stale, { spec: { n: 9 } }, 'api')).rejects.toMatchObject({ status: 409 });
    expect((await col.get('default', 'w')).spec).toEqual({ n: 1 });
  });

  it('is scoped: another workspace or parent does not see the record', async () => {
    await expect(col.get('other', 'w')).rejects.toMatchObject({ status: 404 });
    await expect(col.get('default', 'w', 'some-parent')).rejects.toMatchObject({ status: 404 });
    expect(p.notices).toContainEqual({ workspace: 'default', kind: 'widget', name: 'w' });
  });
});
