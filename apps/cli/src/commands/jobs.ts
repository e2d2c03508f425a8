import type { Tarmac } from '@tarmac/sdk';
import { ArgumentError, EXIT } from '../errors.js';
import { action, type Register } from './run.js';

const TERMINAL = ['succeeded', 'failed', 'cancelled', 'timeout'];

/** The fields of the contract's JobExecution / JobTaskLogs this command reads. */
interface JobExecution {
  status: string;
  stats: {
    total: number;
    success: number;
    failure: number;
    running: number;
    retried: number;
    cancelled: number;
  };
  tasks: { metadata: { name: string } }[];
}
interface TaskLogs {
  task: string;
  text: string;
  next: number;
  done: boolean;
}
const path = (...parts: string[]) => parts.map(encodeURIComponent).join('/');
const POLL_MS = 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `--file` contents: a JSON array of task objects, or `{"tasks": [...]}` (reference §2.4). */
export function parseTasksFile(text: string): Record<string, unknown>[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ArgumentError('--file must hold JSON: an array of task objects or {"tasks": [...]}');
  }
  const tasks = Array.isArray(value) ? value : (value as { tasks?: unknown } | null)?.tasks;
  if (
    !Array.isArray(tasks) ||
    !tasks.every((t) => t !== null && typeof t === 'object' && !Array.isArray(t))
  ) {
    throw new ArgumentError('--file must hold an array of task objects or {"tasks": [...]}');
  }
  return tasks as Record<string, unknown>[];
}

function summary(e: JobExecution): string {
  const s = e.stats;
  return `${e.status}: ${s.success}/${s.total} succeeded, ${s.failure} failed, ${s.running} running, ${s.cancelled} cancelled, ${s.retried} retried`;
}

/** `tarmac run job J --file tasks.json` and `tarmac logs job J EXEC [TASK] [-f]` (issue 17). */
export const registerJobs: Register = (program, ctx, state) => {
  program
    .command('run')
    .description('Run a workload')
    .command('job <job>')
    .description('Start an execution of a job and follow it to the end (exit 1 unless it succeeded)')
    .option('-f, --file <path>', 'JSON file: an array of task objects, or {"tasks": [...]}')
    .option('--parallelism <n>', 'tasks running at once')
    .option('--id <key>', 'idempotency key: the same key twice runs once')
    .option('--detach', 'print the execution id and return without following')
    .action(
      action(
        state,
        (job: string) => `run job ${job}`,
        async (flags, job: string) => {
          const client = await ctx.client(flags);
          const tasks = flags.file
            ? parseTasksFile(new TextDecoder().decode(await ctx.io.readFile(String(flags.file))))
            : [{}];
          const parallelism = flags.parallelism === undefined ? undefined : Number(flags.parallelism);
          if (parallelism !== undefined && !(Number.isInteger(parallelism) && parallelism >= 1)) {
            throw new ArgumentError('--parallelism must be a whole number of at least 1');
          }
          const created = await client.call<{ id: string }>('POST', `/v0/jobs/${path(job)}/executions`, {
            json: {
              tasks,
              allowQueue: true,
              ...(parallelism ? { parallelism } : {}),
              ...(flags.id ? { id: String(flags.id) } : {}),
            },
          });
          ctx.stdout.write(`${created.id}\n`);
          if (flags.detach) return;
          let last = '';
          for (;;) {
            const e = await client.call<JobExecution>(
              'GET',
              `/v0/jobs/${path(job, 'executions', created.id)}`,
            );
            const line = summary(e);
            if (line !== last) ctx.stderr.write(`${line}\n`);
            last = line;
            if (TERMINAL.includes(e.status)) return e.status === 'succeeded' ? EXIT.ok : EXIT.error;
            await sleep(POLL_MS);
          }
        },
      ),
    );

  program
    .command('logs')
    .description('Logs of a workload')
    .command('job <job> <execution> [task]')
    .description("A job execution's task output (every task, or one: task-N or N)")
    .option('-f, --follow', 'keep printing until the tasks end')
    .action(
      action(
        state,
        (job: string, execution: string) => `logs of job ${job} execution ${execution}`,
        async (flags, job: string, execution: string, task?: string) => {
          const client = await ctx.client(flags);
          const base = `/v0/jobs/${path(job, 'executions', execution)}`;
          const names = task
            ? [task]
            : (await client.call<JobExecution>('GET', base)).tasks.map((t) => t.metadata.name);
          await printLogs(client, base, names, Boolean(flags.follow), task === undefined, (s) =>
            ctx.stdout.write(s),
          );
        },
      ),
    );
};

async function printLogs(
  client: Tarmac,
  base: string,
  names: string[],
  follow: boolean,
  prefix: boolean,
  write: (s: string) => void,
): Promise<void> {
  const offsets = new Map(names.map((n) => [n, 0]));
  const done = new Set<string>();
  for (;;) {
    for (const name of names) {
      if (done.has(name)) continue;
      const page = await client.call<TaskLogs>('GET', `${base}/tasks/${path(name)}/logs`, {
        query: { offset: offsets.get(name) ?? 0 },
      });
      offsets.set(name, page.next);
      if (page.text) {
        write(prefix ? page.text.replace(/^(?=.)/gm, `[${page.task}] `) : page.text);
        if (!page.text.endsWith('\n')) write('\n');
      }
      if (page.done || !follow) done.add(name);
    }
    if (done.size === names.length) return;
    await sleep(POLL_MS);
  }
}
