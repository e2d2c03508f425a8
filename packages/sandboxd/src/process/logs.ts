// A process's log files (reference sandbox-api.md §1.3 "Log files"): <name>-<pid>.stdout.log,
// .stderr.log and .log (combined), written synchronously so a reader that replays the file and
// then subscribes to live output in the same tick never misses or repeats a byte. Each file stops
// growing at `maxBytes`, after one "[log truncated …]" marker line. A restarted sandboxd that
// re-adopts a running process reopens its files for appending (issue 19 item 6).
import {
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  writeSync,
  rmSync,
} from 'node:fs';
import { join } from 'node:path';

export type StreamName = 'stdout' | 'stderr';

class CappedFile {
  private fd: number | undefined;
  private size = 0;
  private truncated = false;

  constructor(
    readonly path: string,
    private readonly maxBytes: number,
    append: boolean,
  ) {
    this.fd = openSync(path, append ? 'a' : 'w', 0o640);
    if (append) {
      this.size = fstatSync(this.fd).size;
      this.truncated = this.size >= maxBytes;
    }
  }

  write(chunk: Buffer | string): void {
    if (this.fd === undefined || this.truncated) return;
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    const room = this.maxBytes - this.size;
    if (buf.length <= room) {
      writeSync(this.fd, buf);
      this.size += buf.length;
      return;
    }
    if (room > 0) writeSync(this.fd, buf.subarray(0, room));
    writeSync(this.fd, `\n[log truncated: ${this.maxBytes} bytes reached]\n`);
    this.size = this.maxBytes;
    this.truncated = true;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

export class ProcessLogs {
  private readonly files: Record<StreamName | 'combined', CappedFile>;

  /** `append`: reopen existing files (a re-adopted process) instead of starting them empty. */
  constructor(
    dir: string,
    readonly base: string,
    maxBytes: number,
    append = false,
  ) {
    mkdirSync(dir, { recursive: true });
    this.files = {
      stdout: new CappedFile(join(dir, `${base}.stdout.log`), maxBytes, append),
      stderr: new CappedFile(join(dir, `${base}.stderr.log`), maxBytes, append),
      combined: new CappedFile(join(dir, `${base}.log`), maxBytes, append),
    };
  }

  write(stream: StreamName, chunk: Buffer | string): void {
    this.files[stream].write(chunk);
    this.files.combined.write(chunk);
  }

  /** The whole file (as capped on disk). */
  read(which: StreamName | 'combined'): string {
    try {
      return readFileSync(this.files[which].path, 'utf8');
    } catch {
      return '';
    }
  }

  /** The last `bytes` of a file (GET/list inline only the last 64 KiB, §1.3). */
  tail(which: StreamName | 'combined', bytes: number): string {
    let fd: number | undefined;
    try {
      fd = openSync(this.files[which].path, 'r');
      const size = fstatSync(fd).size;
      const len = Math.min(size, bytes);
      const buf = Buffer.alloc(len);
      readSync(fd, buf, 0, len, size - len);
      return buf.toString('utf8');
    } catch {
      return '';
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  close(): void {
    for (const f of Object.values(this.files)) f.close();
  }

  /** Closes and deletes the files (a process nobody is to see: manager.ts `warm`). */
  remove(): void {
    this.close();
    for (const f of Object.values(this.files)) rmSync(f.path, { force: true });
  }
}

export const INLINE_LOG_BYTES = 64 * 1024;
