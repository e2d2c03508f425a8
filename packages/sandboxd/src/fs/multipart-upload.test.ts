/* eslint-disable @typescript-eslint/no-explicit-any -- tests inspect arbitrary JSON */
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startDaemon, type TestDaemon } from '../test-support/harness.js';

let t: TestDaemon;
beforeAll(async () => {
  t = await startDaemon();
});
afterAll(() => t.stop());

async function putPart(id: string, n: number, data: Buffer): Promise<{ status: number; body: any }> {
  const form = new FormData();
  form.append('file', new Blob([data]), 'part');
  const res = await fetch(`${t.base}/filesystem-multipart/${id}/part?partNumber=${n}`, {
    method: 'PUT',
    body: form,
  });
  return { status: res.status, body: await res.json() };
}

describe('S3-style multipart uploads (reference §1.2)', () => {
  it('initiates, uploads parts out of order, lists, completes in part order', async () => {
    const init = await call(t.base, 'POST', '/filesystem-multipart/initiate/big/file.bin', {
      permissions: '0600',
    });
    expect(init.status).toBe(200);
    expect(init.body).toEqual({
      uploadId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      path: join(t.wd, 'big/file.bin'),
    });
    const id = init.body.uploadId as string;
    const a = Buffer.alloc(70_000, 1);
    const b = Buffer.alloc(50_000, 2);
    const pb = await putPart(id, 2, b);
    const pa = await putPart(id, 1, a);
    expect(pa).toEqual({
      status: 200,
      body: { partNumber: 1, etag: createHash('md5').update(a).digest('hex'), size: 70_000 },
    });
    const parts = await call(t.base, 'GET', `/filesystem-multipart/${id}/parts`);
    expect(parts.body.uploadId).toBe(id);
    expect(parts.body.parts.map((p: { partNumber: number }) => p.partNumber)).toEqual([1, 2]);
    expect(parts.body.parts[0].uploadedAt).toEqual(expect.any(String));
    const list = await call(t.base, 'GET', '/filesystem-multipart');
    expect(list.body.uploads).toEqual([
      expect.objectContaining({
        uploadId: id,
        path: join(t.wd, 'big/file.bin'),
        permissions: 0o600,
        parts: expect.any(Object),
      }),
    ]);
    const done = await call(t.base, 'POST', `/filesystem-multipart/${id}/complete`, {
      parts: [
        { partNumber: 2, etag: pb.body.etag },
        { partNumber: 1, etag: pa.body.etag },
      ],
    });
    expect(done).toMatchObject({
      status: 200,
      body: { message: expect.any(String), path: join(t.wd, 'big/file.bin') },
    });
    expect(readFileSync(join(t.wd, 'big/file.bin')).equals(Buffer.concat([a, b]))).toBe(true);
    expect((statSync(join(t.wd, 'big/file.bin')).mode & 0o777).toString(8)).toBe('600');
    expect((await call(t.base, 'GET', '/filesystem-multipart')).body.uploads).toEqual([]);
  });

  it('validates: bad partNumber 400, unknown id 404, empty parts 400, etag mismatch 400, abort', async () => {
    const id = (await call(t.base, 'POST', '/filesystem-multipart/initiate/x.bin')).body.uploadId as string;
    expect((await putPart(id, 0, Buffer.from('x'))).status).toBe(400);
    expect((await putPart(id, 10001, Buffer.from('x'))).status).toBe(400);
    expect((await putPart('00000000-0000-0000-0000-000000000000', 1, Buffer.from('x'))).status).toBe(404);
    expect((await call(t.base, 'POST', `/filesystem-multipart/${id}/complete`, { parts: [] })).status).toBe(
      400,
    );
    await putPart(id, 1, Buffer.from('x'));
    expect(
      (
        await call(t.base, 'POST', `/filesystem-multipart/${id}/complete`, {
          parts: [{ partNumber: 1, etag: 'nope' }],
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await call(t.base, 'POST', '/filesystem-multipart/nope/complete', {
          parts: [{ partNumber: 1, etag: 'a' }],
        })
      ).status,
    ).toBe(404);
    expect((await call(t.base, 'DELETE', `/filesystem-multipart/${id}/abort`)).status).toBe(200);
    expect((await call(t.base, 'DELETE', `/filesystem-multipart/${id}/abort`)).status).toBe(404);
    expect((await call(t.base, 'GET', `/filesystem-multipart/${id}/parts`)).status).toBe(404);
  });
});
