// Revisions and their traffic over HTTP (issue 16; reference §1.1 RevisionMetadata, §2.1
// RevisionConfiguration): a runtime change makes a revision, a change of spec.revision alone does
// not; spec.revision naming unknown revisions, a canaryPercent out of range or without a canary
// are 400s naming the field; GET …/revisions shows the configured split. (The run plane's view
// of the split, each revision with its own image and envs: run-records.test.ts.)
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTestPlatform, testDatabases, type TestPlatform } from '../../../test-support/harness.js';

type Platform = TestPlatform & { dispose(): Promise<void> };
type ErrorBody = { error: string; message: string; details?: { field: string; message: string }[] };
type Revision = { id: string; active: boolean; canary: boolean; trafficPercent: number; status: string };

const spec = (greeting: string, revision?: Record<string, unknown>) => ({
  runtime: {
    image: `agents/tr:${greeting}`,
    memory: 256,
    envs: [
      { name: 'GREETING', value: greeting },
      { name: 'TOKEN', value: `secret-${greeting}`, secret: true },
    ],
  },
  ...(revision ? { revision } : {}),
});
const body = (s: object) => ({ metadata: { name: 'tr' }, spec: s });

describe.each(testDatabases(process.env))('revision traffic on $name', (db) => {
  let t: Platform;
  beforeEach(async () => {
    t = await openTestPlatform(db);
  });
  afterEach(async () => t.dispose());

  const revisions = async () => (await t.json<Revision[]>('/v0/agents/tr/revisions')).body;
  const put = (s: object) => t.json<ErrorBody>('/v0/agents/tr', { method: 'PUT', body: body(s) });

  it('splits by active/canary and makes no revision for a traffic change', async () => {
    expect((await t.json('/v0/agents', { method: 'POST', body: body(spec('v1')) })).status).toBe(200);
    expect((await put(spec('v2'))).status).toBe(200);
    const [v2, v1] = await revisions();
    expect(v2).toMatchObject({ active: true, canary: false, trafficPercent: 100 });
    expect(v1).toMatchObject({ active: false, trafficPercent: 0, status: 'DEACTIVATED' });
    const split = { active: v1!.id, canary: v2!.id, canaryPercent: 20, stickySessionTtl: 300 };
    expect((await put(spec('v2', split))).status).toBe(200);
    const after = await revisions();
    expect(after.map((r) => r.id)).toEqual([v2!.id, v1!.id]); // no new revision
    expect(after[0]).toMatchObject({ active: false, canary: true, trafficPercent: 20, status: 'DEPLOYING' });
    expect(after[1]).toMatchObject({ active: true, canary: false, trafficPercent: 80 });
    // canaryPercent 100: the canary takes everything; a later PUT without spec.revision: the newest.
    expect((await put(spec('v2', { ...split, canaryPercent: 100 }))).status).toBe(200);
    expect((await revisions()).map((r) => r.trafficPercent)).toEqual([100, 0]);
    expect((await put(spec('v3'))).status).toBe(200);
    expect((await revisions()).map((r) => r.trafficPercent)).toEqual([100, 0, 0]);
  });

  it('400 naming the field: unknown active/canary, canaryPercent out of 0–100 or without a canary', async () => {
    const made = await t.json<ErrorBody>('/v0/agents', {
      method: 'POST',
      body: body(spec('v1', { active: 'nope' })),
    });
    expect(made.status).toBe(400);
    expect(made.body.message).toContain('spec.revision.active');
    expect((await t.json('/v0/agents', { method: 'POST', body: body(spec('v1')) })).status).toBe(200);
    const [only] = await revisions();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ active: 'ghost' }, 'spec.revision.active'],
      [{ active: only!.id, canary: 'ghost', canaryPercent: 10 }, 'spec.revision.canary'],
      [{ canary: only!.id, canaryPercent: 10 }, 'spec.revision.canary'], // the same as active
      [{ canaryPercent: 10 }, 'spec.revision.canaryPercent'],
      [{ canary: only!.id, canaryPercent: 101 }, 'spec.revision.canaryPercent'],
      [{ canary: only!.id, canaryPercent: -1 }, 'spec.revision.canaryPercent'],
      [{ stickySessionTtl: -5 }, 'spec.revision.stickySessionTtl'],
    ];
    for (const [revision, field] of cases) {
      const res = await put(spec('v1', revision));
      expect(res.status, JSON.stringify(revision)).toBe(400);
      expect(res.body.message, JSON.stringify(revision)).toContain(field);
    }
    expect((await revisions()).map((r) => r.trafficPercent)).toEqual([100]);
  });
});
