// The async request spool on a real directory: what is saved loads back byte for byte, oldest
// first; a crash mid-write (a .tmp file) is cleaned up, never run; a damaged or foreign file is
// reported and left alone, never run; ids that are not UUIDs cannot name a file.
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AsyncSpool, type SpooledRequest } from './async-spool.js';

const request = (id: string, acceptedAt: number): SpooledRequest => ({
  id,
  kind: 'agent',
  workspace: 'ws',
  name: 'a',
  recordId: 'rec-1',
  path: '/x?y=1',
  triggerId: 'later',
  method: 'POST',
  headers: { 'x-service-thread-id': 't', cookie: ['a=1', 'b=2'] },
  acceptedAt,
  deadline: acceptedAt + 900_000,
});
const ID1 = '00000000-0000-4000-8000-000000000001';
const ID2 = '00000000-0000-4000-8000-000000000002';

describe('async spool', () => {
  let dir = '';
  beforeEach(() => {
    dir = join(mkdtempSync(join(tmpdir(), 'tarmac-spool-')), 'async');
  });
  afterEach(() => rmSync(join(dir, '..'), { recursive: true, force: true }));

  it('loads what was saved, byte for byte and oldest first; remove forgets it', async () => {
    const spool = new AsyncSpool(dir);
    const binary = Buffer.from([0, 10, 255, 13, 10, 0x7b]);
    await spool.save(request(ID2, 2000), binary);
    await spool.save(request(ID1, 1000), Buffer.from('{"inputs":"hi"}\n'));
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const { requests, unreadable } = await new AsyncSpool(dir).load();
    expect(unreadable).toEqual([]);
    expect(requests.map((r) => r.request)).toEqual([request(ID1, 1000), request(ID2, 2000)]);
    expect(requests.map((r) => r.body.toString('latin1'))).toEqual([
      '{"inputs":"hi"}\n',
      binary.toString('latin1'),
    ]);
    await spool.remove(ID1);
    await spool.remove(ID1); // absent is fine
    expect((await spool.load()).requests.map((r) => r.request.id)).toEqual([ID2]);
  });

  it('removes a half-written file, reports a damaged or mismatched one and never runs either', async () => {
    const spool = new AsyncSpool(dir);
    await spool.save(request(ID1, 1000), Buffer.from('ok'));
    writeFileSync(join(dir, `${ID2}.req.tmp`), '{"id":');
    writeFileSync(join(dir, `${ID2}.req`), 'not json\nbody');
    const other = '00000000-0000-4000-8000-000000000003';
    writeFileSync(join(dir, `${other}.req`), `${JSON.stringify(request(ID1, 5))}\nbody`); // id ≠ name
    writeFileSync(join(dir, 'notes.txt'), 'an operator file');
    const { requests, unreadable } = await spool.load();
    expect(requests.map((r) => r.request.id)).toEqual([ID1]);
    expect(unreadable.sort()).toEqual([join(dir, `${ID2}.req`), join(dir, `${other}.req`)].sort());
    expect(readdirSync(dir)).not.toContain(`${ID2}.req.tmp`);
  });

  it('refuses an id that is not a UUID (it names the file)', async () => {
    await expect(new AsyncSpool(dir).save(request('../../etc/x', 1), Buffer.alloc(0))).rejects.toThrow(
      /UUID/,
    );
  });

  it('loads nothing from a directory never made', async () => {
    expect(await new AsyncSpool(join(dir, 'never')).load()).toEqual({ requests: [], unreadable: [] });
  });
});
