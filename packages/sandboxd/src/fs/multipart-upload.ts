// S3-style multipart uploads (reference sandbox-api.md §1.2 "Multipart upload"). State is kept
// on disk only, in <tmpDir>/multipart-uploads/<uploadId>/ (meta.json + part-N + part-N.json), so
// it survives a daemon restart without any reload step.
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { chmod, mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Hono } from 'hono';
import { multipartCompleteRequestSchema, multipartInitiateRequestSchema } from '@tarmac/contract';
import type { Clock } from '../config.js';
import { jsonBody } from '../http/body.js';
import { badRequest, fsError, notFound } from '../http/errors.js';
import { nodeIncoming, receiveMultipart } from '../http/multipart.js';
import { parsePermissions } from './files.js';
import { rawRemainder, resolveRequestPath, type PathContext } from './paths.js';

interface Meta {
  uploadId: string;
  path: string;
  permissions: number;
  initiatedAt: string;
}
interface Part {
  partNumber: number;
  etag: string;
  size: number;
  uploadedAt: string;
}

export function multipartRoutes(app: Hono, ctx: PathContext, tmpDir: string, clock: Clock): void {
  const base = join(tmpDir, 'multipart-uploads');
  const dirOf = (id: string): string => {
    if (!/^[0-9a-f-]{36}$/.test(id)) throw notFound(`upload not found: ${id}`);
    return join(base, id);
  };
  const meta = async (id: string): Promise<Meta> => {
    try {
      return JSON.parse(await readFile(join(dirOf(id), 'meta.json'), 'utf8')) as Meta;
    } catch {
      throw notFound(`upload not found: ${id}`);
    }
  };
  const parts = async (id: string): Promise<Part[]> => {
    const names = (await readdir(dirOf(id))).filter((n) => /^part-\d+\.json$/.test(n));
    const list = await Promise.all(
      names.map(async (n) => JSON.parse(await readFile(join(dirOf(id), n), 'utf8')) as Part),
    );
    return list.sort((a, b) => a.partNumber - b.partNumber);
  };

  app.post('/filesystem-multipart/initiate/*', async (c) => {
    const path = resolveRequestPath(rawRemainder(c.req.url, '/filesystem-multipart/initiate'), ctx);
    const body = await jsonBody(c, multipartInitiateRequestSchema, true);
    const m: Meta = {
      uploadId: randomUUID(),
      path,
      permissions: parsePermissions(body.permissions, 0o644),
      initiatedAt: clock.now().toISOString(),
    };
    await mkdir(dirOf(m.uploadId), { recursive: true });
    await writeFile(join(dirOf(m.uploadId), 'meta.json'), JSON.stringify(m));
    return c.json({ uploadId: m.uploadId, path });
  });

  app.put('/filesystem-multipart/:id/part', async (c) => {
    const id = c.req.param('id');
    await meta(id);
    const n = Number(c.req.query('partNumber'));
    if (!Number.isInteger(n) || n < 1 || n > 10000)
      throw badRequest('partNumber must be an integer from 1 to 10000');
    const dest = join(dirOf(id), `part-${n}`);
    const { file } = await receiveMultipart(c.req.raw, dest, true, nodeIncoming(c.env));
    if (!file) throw badRequest('invalid request body: missing file part');
    const part: Part = {
      partNumber: n,
      etag: file.md5,
      size: file.size,
      uploadedAt: clock.now().toISOString(),
    };
    await writeFile(join(dirOf(id), `part-${n}.json`), JSON.stringify(part));
    return c.json({ partNumber: n, etag: part.etag, size: part.size });
  });

  app.post('/filesystem-multipart/:id/complete', async (c) => {
    const id = c.req.param('id');
    const m = await meta(id);
    const body = await jsonBody(c, multipartCompleteRequestSchema);
    const have = new Map((await parts(id)).map((p) => [p.partNumber, p]));
    const ordered = [...body.parts].sort((a, b) => a.partNumber - b.partNumber);
    for (const p of ordered) {
      const got = have.get(p.partNumber);
      if (!got) throw badRequest(`part ${p.partNumber} was not uploaded`);
      if (got.etag !== p.etag.replace(/"/g, '')) throw badRequest(`etag mismatch for part ${p.partNumber}`);
    }
    const tmp = join(dirOf(id), 'assembled');
    try {
      const out = createWriteStream(tmp);
      for (const p of ordered)
        await pipeline(createReadStream(join(dirOf(id), `part-${p.partNumber}`)), out, { end: false });
      await new Promise<void>((res, rej) => out.end((err?: Error | null) => (err ? rej(err) : res())));
      await mkdir(dirname(m.path), { recursive: true, mode: 0o755 });
      await chmod(tmp, m.permissions);
      await rename(tmp, m.path);
    } catch (err) {
      throw fsError(err, m.path);
    }
    await rm(dirOf(id), { recursive: true, force: true });
    return c.json({ message: 'Multipart upload completed successfully', path: m.path });
  });

  app.delete('/filesystem-multipart/:id/abort', async (c) => {
    const id = c.req.param('id');
    await meta(id);
    await rm(dirOf(id), { recursive: true, force: true });
    return c.json({ message: 'Multipart upload aborted successfully' });
  });

  app.get('/filesystem-multipart/:id/parts', async (c) => {
    const id = c.req.param('id');
    await meta(id);
    return c.json({ uploadId: id, parts: await parts(id) });
  });

  app.get('/filesystem-multipart', async (c) => {
    const ids = await readdir(base).catch(() => [] as string[]);
    const uploads = [];
    for (const id of ids) {
      const m = await meta(id).catch(() => undefined);
      if (!m) continue;
      const ps = await parts(id);
      uploads.push({ ...m, parts: Object.fromEntries(ps.map((p) => [String(p.partNumber), p])) });
    }
    return c.json({ uploads });
  });
}
