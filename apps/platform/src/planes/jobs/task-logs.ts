/**
 * Task output kept after its container is gone (issue 17: `tarmac logs job J EXEC [TASK]`): each
 * attempt's container log is appended to `<dir>/<execution row id>/<task index>.log` before the
 * container is deleted. Bounded: at most MAX_ATTEMPT_LOG_BYTES of each attempt (its tail) and
 * MAX_TASK_LOG_BYTES per task file (older attempts dropped first).
 */
import { appendFileSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const MAX_ATTEMPT_LOG_BYTES = 1024 * 1024;
export const MAX_TASK_LOG_BYTES = 4 * 1024 * 1024;

export class TaskLogArchive {
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
  if (!/^[A-Za-z0-9-]{1,64}$/.test(id)) throw new Error(`bad execution id ${JSON.stringify(id)}`);
  return id;
}
