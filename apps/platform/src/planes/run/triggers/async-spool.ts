/**
 * Accepted async requests on disk (issue 16; reference control-plane.md §5.3): a 202 promises a
 * callback, so a request is written here — and synced — before it is answered, and removed once
 * its callback was delivered or finally refused. A platform that stops or crashes in between finds
 * it at start and runs it again (at least once: an agent may see a request twice when the platform
 * died while it ran, and a receiver a callback twice when it died while delivering; the request id
 * is the same each time, for both to deduplicate on).
 *
 * One file per request, `<id>.req`: a JSON line with what the request needs to run again, then the
 * body's bytes. Only the headers forwarded to the agent are kept: the caller's credentials
 * (Authorization …) never reach the disk. Written to `<id>.req.tmp`, synced, renamed, and the
 * directory synced, so a crash leaves either the whole request or a temporary file, which loading
 * removes. The in-memory bounds of async-runs.ts (queue per workspace, MAX_QUEUED_BYTES) bound
 * what is here too.
 */
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunKind } from '../run-ports.js';

export interface SpooledRequest {
  id: string;
  kind: RunKind;
  workspace: string;
  name: string;
  /** The record's id at acceptance: a record deleted and made again under the name is another. */
  recordId: string;
  /** What the replica gets: path and query. */
  path: string;
  /** The http-async trigger whose callback it has (undefined: none). */
  triggerId: string | undefined;
  method: string;
  /** The headers forwarded to the agent (never the platform's credentials). */
  headers: Record<string, string | string[]>;
  acceptedAt: number;
  /** Epoch ms after which the agent's answer is a timeout (the trigger's `timeout`). */
  deadline: number;
}

export interface LoadedRequest {
  request: SpooledRequest;
  body: Buffer;
}

const ID = /^[0-9a-f-]{36}$/;
const SUFFIX = '.req';

export class AsyncSpool {
  private made = false;

  constructor(private readonly dir: string) {}

  /** Writes the request durably; resolves once it is on disk. */
  async save(request: SpooledRequest, body: Buffer): Promise<void> {
    if (!ID.test(request.id)) throw new Error(`async request id ${request.id} is not a UUID`);
    await this.ensureDir();
    const file = this.file(request.id);
    const tmp = `${file}.tmp`;
    const handle = await open(tmp, 'w', 0o600);
    try {
      await handle.writev([Buffer.from(`${JSON.stringify(request)}\n`), body]);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, file);
    await this.syncDir();
  }

  /** Forgets a request (delivered, finally refused, or not to be run); absent is fine. */
  async remove(id: string): Promise<void> {
    await rm(this.file(id), { force: true });
  }

  /**
   * Every request still here, oldest first. Temporary files (a crash mid-write: never answered
   * 202) are removed; a file that cannot be read as a request is reported in `unreadable` and left
   * for an operator, never run.
   */
  async load(): Promise<{ requests: LoadedRequest[]; unreadable: string[] }> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { requests: [], unreadable: [] };
      throw err;
    }
    const requests: LoadedRequest[] = [];
    const unreadable: string[] = [];
    for (const name of names) {
      const path = join(this.dir, name);
      if (name.endsWith(`${SUFFIX}.tmp`)) {
        await rm(path, { force: true });
        continue;
      }
      if (!name.endsWith(SUFFIX)) continue;
      const parsed = parse(await readFile(path), name.slice(0, -SUFFIX.length));
      if (parsed) requests.push(parsed);
      else unreadable.push(path);
    }
    requests.sort((a, b) => a.request.acceptedAt - b.request.acceptedAt);
    return { requests, unreadable };
  }

  private file(id: string): string {
    return join(this.dir, `${id}${SUFFIX}`);
  }

  private async ensureDir(): Promise<void> {
    if (this.made) return;
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    this.made = true;
  }

  private async syncDir(): Promise<void> {
    const handle = await open(this.dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
}

function parse(bytes: Buffer, id: string): LoadedRequest | undefined {
  const eol = bytes.indexOf(0x0a);
  if (eol < 0) return undefined;
  try {
    const request = JSON.parse(bytes.subarray(0, eol).toString('utf8')) as SpooledRequest;
    const valid =
      request.id === id &&
      ID.test(id) &&
      typeof request.workspace === 'string' &&
      typeof request.name === 'string' &&
      typeof request.path === 'string' &&
      typeof request.deadline === 'number' &&
      typeof request.headers === 'object';
    return valid ? { request, body: bytes.subarray(eol + 1) } : undefined;
  } catch {
    return undefined;
  }
}
