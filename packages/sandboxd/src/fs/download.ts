// GET /filesystem on a file: JSON `FileWithContent` or raw bytes ("download mode"), with Range
// (reference sandbox-api.md §1.2 "GET on a file: JSON or raw bytes").
import { createReadStream, type Stats } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname, basename } from 'node:path';
import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { HttpError } from '../http/errors.js';

/** Download mode: Accept has octet-stream, or is set without json and `*\/*`, or ?download=true. */
export function wantsDownload(accept: string | undefined, download: string | undefined): boolean {
  if (download === 'true') return true;
  if (accept === undefined || accept === '') return false;
  const a = accept.toLowerCase();
  if (a.includes('application/octet-stream')) return true;
  return !a.includes('application/json') && !a.includes('*/*');
}

const TYPES: Record<string, string> = {
  '.txt': 'text/plain; charset=utf-8',
  '.log': 'text/plain; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'application/javascript',
  '.json': 'application/json',
  '.xml': 'application/xml',
  '.pdf': 'application/pdf',
  '.zip': 'application/zip',
  '.tar': 'application/x-tar',
  '.gz': 'application/gzip',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.gif': 'image/gif',
  '.svg': 'image/svg+xml',
};

export const contentTypeOf = (path: string): string =>
  TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream';

/** One `bytes=a-b`, `a-` or `-n` range; undefined for none/multi (whole file), 416 if unsatisfiable. */
export function parseRange(header: string | undefined, size: number): [number, number] | undefined {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m) return undefined;
  const [, a = '', b = ''] = m;
  let start: number;
  let end: number;
  if (a === '' && b === '') return undefined;
  if (a === '') {
    start = Math.max(0, size - Number(b));
    end = size - 1;
  } else {
    start = Number(a);
    end = b === '' ? size - 1 : Math.min(Number(b), size - 1);
  }
  if (start >= size || start > end) throw new HttpError(416, `range not satisfiable: ${header}`);
  return [start, end];
}

/** Files up to this size are read in one call and sent as one buffer (no stream machinery). */
const SMALL_FILE = 8 * 1024 * 1024;

interface Plan {
  status: 200 | 206;
  headers: Record<string, string>;
  start: number;
  end: number;
}

function plan(path: string, st: Stats, range: string | undefined): Plan {
  const r = parseRange(range, st.size);
  const [start, end] = r ?? [0, st.size - 1];
  const headers: Record<string, string> = {
    'content-type': contentTypeOf(path),
    'content-disposition': `attachment; filename="${basename(path).replace(/"/g, '')}"`,
    'accept-ranges': 'bytes',
    'last-modified': st.mtime.toUTCString(),
    'content-length': String(Math.max(0, end - start + 1)),
  };
  if (r) headers['content-range'] = `bytes ${start}-${end}/${st.size}`;
  return { status: r ? 206 : 200, headers, start, end };
}

/**
 * Download mode. With node's response at hand (`out`) a large file is piped straight into it
 * (no web-stream conversion; `extraHeaders` are the plane's common headers) and undefined is
 * returned: the response is already sent. Otherwise a Response is built.
 */
export async function download(
  path: string,
  st: Stats,
  range: string | undefined,
  out?: ServerResponse,
  extraHeaders: Record<string, string> = {},
): Promise<Response | undefined> {
  const p = plan(path, st, range);
  if (st.size > SMALL_FILE && out) {
    out.writeHead(p.status, { ...extraHeaders, ...p.headers });
    await pipeline(createReadStream(path, { start: p.start, end: p.end }), out).catch(() => out.destroy());
    return undefined;
  }
  let body: ReadableStream<Uint8Array> | Uint8Array | null = null;
  if (st.size > SMALL_FILE) {
    body = Readable.toWeb(
      createReadStream(path, { start: p.start, end: p.end }),
    ) as ReadableStream<Uint8Array>;
  } else if (st.size > 0) {
    body = (await readFile(path)).subarray(p.start, p.end + 1);
  }
  return new Response(body, { status: p.status, headers: p.headers });
}
