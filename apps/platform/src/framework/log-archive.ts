/**
 * Output of containers kept after they are gone: each attempt's container log appended to
 * `<dir>/<owner id>/<stream>.log` before the container is deleted. Owners: a job execution row with
 * one stream per task (issue 17, `tarmac logs job`), an agent or function record with one stream
 * per replica slot (issue 16, `tarmac logs agent`). Bounded: at most MAX_ATTEMPT_LOG_BYTES of each
 * attempt (its tail) and MAX_TASK_LOG_BYTES per stream file (older attempts dropped first).
 */
import { appendFileSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const MAX_ATTEMPT_LOG_BYTES = 1024 * 1024;
export const MAX_TASK_LOG_BYTES = 4 * 1024 * 1024;

export class LogArchive {
  constructor(private readonly dir: string) {}

  append(rowId: string, index: number, attempt: number, text: string): void {
    const dir = join(this.dir, safe(rowId));
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = join(dir, `${index}.log`);
    appendFileSync(file, `--- attempt ${attempt} ---\n${text}${text.endsWith('\n') || !text ? '' : '\n'}`, {
      mode: 0o600,
    });
    if (statSync(file).size > MAX_TASK_LOG_BYTES) {
      const all = readFileSync(file);
      writeFileSync(file, all.subarray(all.length - MAX_TASK_LOG_BYTES));
    }
  }

  read(rowId: string, index: number): string {
    try {
      return readFileSync(join(this.dir, safe(rowId), `${index}.log`), 'utf8');
    } catch {
      return '';
    }
  }

  remove(rowId: string): void {
    rmSync(join(this.dir, safe(rowId)), { recursive: true, force: true });
  }
}

/** Row ids are ours (UUIDs); refuse anything that could leave the directory all the same. */
function safe(id: string): string {
  if (!/^[A-Za-z0-9-]{1,64}$/.test(id)) throw new Error(`bad log owner id ${JSON.stringify(id)}`);
  return id;
}
