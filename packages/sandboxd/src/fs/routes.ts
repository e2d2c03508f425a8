// /filesystem/{path} and /filesystem/tree/{path} (reference sandbox-api.md §1.2; spec "Sandbox
// API" tree shape). Tree routes are registered first, so `tree/…` never reaches /filesystem/*
// (the reference's prefix-middleware quirk, §1.1 "Tree routes").
import { chmod, mkdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import type { Context, Hono } from 'hono';
import { fileRequestSchema, treeRequestSchema } from '@tarmac/contract';
import type { PathContext } from './paths.js';
import { rawRemainder, resolveRequestPath } from './paths.js';
import { badRequest, fsError } from '../http/errors.js';
import { jsonBody, queryFlag } from '../http/body.js';
import { isMultipart, nodeIncoming, nodeOutgoing, receiveMultipart } from '../http/multipart.js';
import {
  listDirectory,
  makeDirectory,
  parsePermissions,
  remove,
  toFile,
  tree,
  writeFileAt,
} from './files.js';
import { download as sendDownload, wantsDownload } from './download.js';
import { COMMON_HEADERS } from '../http/app.js';

export function filesystemRoutes(app: Hono, ctx: PathContext): void {
  const pathOf = (url: string, prefix: string): string => resolveRequestPath(rawRemainder(url, prefix), ctx);

  app.get('/filesystem/tree/*', async (c) => c.json(await tree(pathOf(c.req.url, '/filesystem/tree'))));
  app.get('/filesystem/tree', async (c) => c.json(await tree(pathOf(c.req.url, '/filesystem/tree'))));

  const putTree = async (c: Context): Promise<Response> => {
    const root = pathOf(c.req.url, '/filesystem/tree');
    const body = await jsonBody(c, treeRequestSchema);
    for (const [rel, content] of Object.entries(body.files)) {
      const target = resolve(root, rel.replace(/^\/+/, ''));
      const r = relative(root, target);
      if (r === '' || r === '..' || r.startsWith('../'))
        throw badRequest(`invalid file path in tree: ${rel}`);
      await writeFileAt(target, content, 0o644);
    }
    await makeDirectory(root, 0o755).catch(() => undefined);
    return c.json(await tree(root));
  };
  app.put('/filesystem/tree/*', putTree);
  app.put('/filesystem/tree', putTree);

  const deleteTree = async (c: Context): Promise<Response> => {
    const path = pathOf(c.req.url, '/filesystem/tree');
    await remove(path, queryFlag(c.req.query('recursive')));
    return c.json({ message: 'Directory deleted successfully', path });
  };
  app.delete('/filesystem/tree/*', deleteTree);
  app.delete('/filesystem/tree', deleteTree);

  app.get('/filesystem/*', async (c) => {
    const path = pathOf(c.req.url, '/filesystem');
    const st = await stat(path).catch((err: unknown) => {
      throw fsError(err, path);
    });
    const download = wantsDownload(c.req.header('accept'), c.req.query('download'));
    if (st.isDirectory()) {
      if (download) throw badRequest(`cannot download a directory: ${path}`);
      return c.json(await listDirectory(path));
    }
    if (download) {
      const sent = await sendDownload(path, st, c.req.header('range'), nodeOutgoing(c.env), COMMON_HEADERS);
      return sent ?? RESPONSE_ALREADY_SENT;
    }
    const content = await readFile(path, 'utf8').catch((err: unknown) => {
      throw fsError(err, path);
    });
    return c.json({ ...toFile(path, st), content });
  });

  app.put('/filesystem/*', async (c) => {
    const path = pathOf(c.req.url, '/filesystem');
    if (isMultipart(c.req.header('content-type'))) {
      await mkdir(dirname(path), { recursive: true, mode: 0o755 }).catch((err: unknown) => {
        throw fsError(err, path);
      });
      const tmp = join(
        dirname(path),
        `.upload-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`,
      );
      const { fields, file } = await receiveMultipart(c.req.raw, tmp, false, nodeIncoming(c.env));
      try {
        if (!file) throw badRequest('invalid request body: missing file part');
        await chmod(tmp, parsePermissions(fields.permissions, 0o644));
        await rename(tmp, path);
      } catch (err) {
        await unlink(tmp).catch(() => undefined);
        throw fsError(err, path);
      }
      return c.json({ message: 'File uploaded successfully', path });
    }
    const body = await jsonBody(c, fileRequestSchema);
    if (body.isDirectory) {
      await makeDirectory(path, parsePermissions(body.permissions, 0o755));
      return c.json({ message: 'Directory created successfully', path });
    }
    await writeFileAt(path, body.content ?? '', parsePermissions(body.permissions, 0o644));
    return c.json({ message: 'File created successfully', path });
  });

  app.delete('/filesystem/*', async (c) => {
    const path = pathOf(c.req.url, '/filesystem');
    await remove(path, queryFlag(c.req.query('recursive')));
    return c.json({ message: 'Deleted successfully', path });
  });
}
