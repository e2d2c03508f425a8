/**
 * Fires sandbox schedules (issue 14 item 6; reference `SandboxScheduleEntry`). One tick a second
 * over an in-memory copy of the schedules (refreshed by the change feed and a periodic resync);
 * a due entry first CLAIMS its instant in the store (`system.lastRunAt`, optimistic concurrency),
 * and only the process that wrote the claim starts the process — so an instant is never run
 * twice, across a restart or by two platform processes on one store. A crash between the claim
 * and the submit loses that one run rather than doubling it (at most once).
 *
 * A firing runs the command inside the sandbox through sandboxd's `POST /process`, exactly as a
 * user's `/process` call does (same isolation); a sandbox in STANDBY is thawed first (the
 * gateway's resume path, `touch`). The execution record is written at the submit and completed by
 * following the process until it ends (exit code, the last 16 KiB of its output).
 */
import type { ProcessResponse, ScheduleExecution } from '@tarmac/contract';
import type { Store } from '@tarmac/store';
import type { Logger } from 'pino';
import { randomBytes } from 'node:crypto';
import type { ChangeFeed } from '../../../framework/change-feed.js';
import { SANDBOX_SCHEDULE_EXECUTION_KIND, SANDBOX_SCHEDULE_KIND } from '../../../framework/kinds.js';
import { patchById } from '../../../framework/read-modify-write.js';
import type { SecretBox } from '../../../framework/secrets.js';
import type { LiveSandbox, LiveSandboxes } from '../controllers/live-sandboxes.js';
import {
  EXECUTION_DONE,
  EXECUTION_RUNNING,
  openEnv,
  scheduleSecretContext,
  type ExecutionRow,
  type ScheduleRow,
  type ScheduleSpec,
  afterOf,
  type ScheduleSystem,
} from './schedule-record.js';
import { dueInstant, nextInstant } from './schedule-timing.js';

/** Output kept per execution (the tail: where errors are). */
export const MAX_EXECUTION_OUTPUT = 16 * 1024;
/** Processes followed to their end at once; past it an execution is recorded without its outcome. */
export const MAX_FOLLOWED = 256;

export interface ScheduleRunnerDeps {
  resources: Store['resources'];
  live: LiveSandboxes;
  /** Thaws a STANDBY sandbox and marks it used (StandbyController.touch). */
  touch: (entry: LiveSandbox) => void;
  /** Headers that authenticate the platform to one sandbox's sandboxd (its token). */
  sandboxdHeaders: (recordId: string) => Record<string, string>;
  secrets: SecretBox;
  changes: ChangeFeed;
  logger: Logger;
  /** Resolves once the controllers re-attached the surviving sandboxes (first resync). */
  ready: Promise<void>;
  now?: () => number;
  /** sandboxd's port in the sandbox (8080; tests point it at a stand-in). */
  sandboxdPort?: number;
  tickMs?: number;
  resyncMs?: number;
  /** MAX_FOLLOWED by default. */
  maxFollowed?: number;
  pollMs?: number;
}

interface Cached {
  row: ScheduleRow;
  /** Epoch ms of the next instant, or null (an `at` that fired). */
  nextAt: number | null;
}

export class ScheduleRunner {
  private readonly cache = new Map<string, Cached>();
  private readonly firing = new Set<string>();
  private following = 0;
  private readonly timers: NodeJS.Timeout[] = [];
  private unsubscribe: (() => void) | undefined;
  private stopped = false;
  private readonly now: () => number;

  constructor(private readonly d: ScheduleRunnerDeps) {
    this.now = d.now ?? Date.now;
  }

  start(): void {
    this.unsubscribe = this.d.changes.subscribe(SANDBOX_SCHEDULE_KIND, (ref) => {
      const [parent, name] = ref.name.split('/');
      if (!parent || !name) return;
      void this.d.resources
        .get<ScheduleSpec>(ref.workspace, SANDBOX_SCHEDULE_KIND, name, parent)
        .then((row) => {
          for (const [id, c] of this.cache) {
            if (c.row.workspace === ref.workspace && c.row.parent === parent && c.row.name === name) {
              this.cache.delete(id);
            }
          }
          if (row) this.remember(row);
        })
        .catch((err: unknown) => this.d.logger.warn({ err, ref }, 'could not read a changed schedule'));
    });
    // Fire only once the sandboxes that survived a restart are live again.
    void this.d.ready
      .then(() => this.resync())
      .then(() => this.resumeRunning())
      .catch((err: unknown) => this.d.logger.error({ err }, 'schedule runner start failed'))
      .finally(() => {
        if (this.stopped) return;
        this.every(this.d.tickMs ?? 1000, () => this.tick());
        this.every(this.d.resyncMs ?? 30_000, () => this.resync());
      });
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    for (const t of this.timers) clearInterval(t);
  }

  private every(ms: number, fn: () => Promise<void>): void {
    let busy = false;
    const t = setInterval(() => {
      if (busy) return;
      busy = true;
      fn()
        .catch((err: unknown) => this.d.logger.error({ err }, 'schedule runner pass failed'))
        .finally(() => (busy = false));
    }, ms);
    t.unref();
    this.timers.push(t);
  }

  private async resync(): Promise<void> {
    const rows = await this.d.resources.listByKind<ScheduleSpec>(SANDBOX_SCHEDULE_KIND);
    this.cache.clear();
    for (const row of rows) this.remember(row);
  }

  private remember(row: ScheduleRow): void {
    const next = nextInstant(row.spec, afterOf(row));
    this.cache.set(row.id, { row, nextAt: next ? next.getTime() : null });
  }

  /** One pass: fire what is due. Exposed for tests. */
  async tick(): Promise<void> {
    const now = this.now();
    const due = [...this.cache.values()].filter(
      (c) => c.nextAt !== null && c.nextAt <= now && !this.firing.has(c.row.id),
    );
    await Promise.all(due.map((c) => this.fire(c.row.id)));
  }

  private async fire(id: string): Promise<void> {
    this.firing.add(id);
    try {
      let instant: Date | undefined;
      const claimed = await patchById<ScheduleSpec>(this.d.resources, id, (row) => {
        instant = dueInstant(row.spec, afterOf(row), new Date(this.now()));
        if (!instant) return undefined;
        const system: ScheduleSystem = { ...systemOf(row), lastRunAt: instant.toISOString() };
        return { system: system as unknown as Record<string, unknown> };
      });
      if (!claimed || !instant) {
        // Deleted, or someone else claimed it: look again at the stored row.
        const row = await this.d.resources.getById<ScheduleSpec>(id);
        if (row) this.remember(row);
        else this.cache.delete(id);
        return;
      }
      this.remember(claimed);
      await this.run(claimed, instant);
    } catch (err) {
      this.d.logger.error({ err, schedule: id }, 'firing a schedule failed');
    } finally {
      this.firing.delete(id);
    }
  }

  private async run(schedule: ScheduleRow, instant: Date): Promise<void> {
    const input = schedule.spec.input;
    const executionId = `exec-${instant.getTime().toString(36)}-${randomBytes(3).toString('hex')}`;
    const processName = `${input.name ?? schedule.name}-${executionId.slice(5)}`;
    const timeout = input.timeout ?? 600;
    const base = {
      id: executionId,
      scheduleId: schedule.name,
      sandbox: schedule.parent,
      executedAt: new Date(this.now()).toISOString(),
      createdAt: new Date(this.now()).toISOString(),
      processName,
      timeout,
      processStatus: null,
      exitCode: null,
      completedAt: null,
      output: '',
    } satisfies Partial<ScheduleExecution>;
    const entry = this.d.live.get(schedule.workspace, schedule.parent);
    let submit: { statusCode: number; error: string };
    if (!entry) {
      submit = { statusCode: 0, error: `sandbox "${schedule.parent}" is not running` };
    } else {
      submit = await this.submit(entry, schedule, processName, timeout);
    }
    const accepted = submit.statusCode >= 200 && submit.statusCode < 400;
    const record: ScheduleExecution = {
      ...base,
      ...submit,
      status: accepted ? 'succeeded' : 'failed',
      processStatus: accepted ? 'running' : null,
    };
    const row = await this.d.resources.create<ScheduleExecution>({
      id: `${schedule.id}-${executionId}`,
      workspace: schedule.workspace,
      kind: SANDBOX_SCHEDULE_EXECUTION_KIND,
      parent: schedule.parent,
      name: executionId,
      displayName: null,
      externalId: null,
      labels: {},
      spec: record,
      status: accepted ? EXECUTION_RUNNING : EXECUTION_DONE,
      state: null,
      system: { recordId: entry?.id ?? null },
      events: [],
      createdAt: record.createdAt,
      updatedAt: record.createdAt,
      createdBy: 'scheduler',
      updatedBy: 'scheduler',
      terminatedAt: null,
    });
    await this.keepHistory(schedule.id, executionId);
    if (accepted && entry) void this.follow(row, entry);
  }

  private async submit(entry: LiveSandbox, schedule: ScheduleRow, processName: string, timeout: number) {
    const input = schedule.spec.input;
    try {
      this.d.touch(entry); // resume from STANDBY, as a request through the gateway would
      const env = openEnv(
        this.d.secrets,
        input.env,
        scheduleSecretContext(schedule.workspace, schedule.parent, schedule.name),
      );
      const res = await fetch(`http://${entry.ip}:${this.d.sandboxdPort ?? 8080}/process`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...this.d.sandboxdHeaders(entry.id) },
        body: JSON.stringify({
          command: input.command,
          name: processName,
          ...(input.workingDir ? { workingDir: input.workingDir } : {}),
          ...(env ? { env } : {}),
          keepAlive: input.keepAlive ?? true,
          timeout,
          waitForCompletion: false,
        }),
        signal: AbortSignal.timeout(15_000),
      });
      const error = res.ok ? '' : (await res.text()).slice(0, 1024);
      return { statusCode: res.status, error };
    } catch (err) {
      return { statusCode: 0, error: `sandbox "${schedule.parent}" unreachable: ${(err as Error).message}` };
    }
  }

  /** Appends the execution to its schedule's history and deletes what falls out of it. */
  private async keepHistory(scheduleId: string, executionId: string): Promise<void> {
    let dropped: string[] = [];
    const row = await patchById<ScheduleSpec>(this.d.resources, scheduleId, (r) => {
      const all = [...(systemOf(r).executions ?? []), executionId];
      dropped = all.slice(0, Math.max(0, all.length - r.spec.maxExecutions));
      const system: ScheduleSystem = { ...systemOf(r), executions: all.slice(dropped.length) };
      return { system: system as unknown as Record<string, unknown> };
    });
    if (!row) return;
    for (const name of dropped) {
      const ex = await this.d.resources.get(row.workspace, SANDBOX_SCHEDULE_EXECUTION_KIND, name, row.parent);
      if (ex) await this.d.resources.delete(ex.id);
    }
  }

  /** After a restart: keep following executions whose process was still running. */
  private async resumeRunning(): Promise<void> {
    const rows = await this.d.resources.listByKind<ScheduleExecution>(SANDBOX_SCHEDULE_EXECUTION_KIND, {
      status: [EXECUTION_RUNNING],
    });
    for (const row of rows) {
      const entry = this.d.live.get(row.workspace, row.parent);
      if (entry) void this.follow(row, entry);
      else await this.complete(row.id, { processStatus: 'unknown' });
    }
  }

  /**
   * Polls sandboxd until the process ends, then records its exit code and output. A process past
   * its timeout is killed (sandboxd kills keep-alive ones itself). Bounded: a day at most.
   */
  private async follow(row: ExecutionRow, entry: LiveSandbox): Promise<void> {
    if (this.following >= (this.d.maxFollowed ?? MAX_FOLLOWED)) {
      await this.complete(row.id, { processStatus: 'unknown' });
      return;
    }
    this.following += 1;
    try {
      await this.followUntilDone(row, entry);
    } finally {
      this.following -= 1;
    }
  }

  private async followUntilDone(row: ExecutionRow, entry: LiveSandbox): Promise<void> {
    const { processName, timeout } = row.spec;
    const started = Date.parse(row.spec.executedAt);
    const giveUp = started + 86_400_000;
    const headers = this.d.sandboxdHeaders(entry.id);
    const url = `http://${entry.ip}:${this.d.sandboxdPort ?? 8080}/process/${encodeURIComponent(processName)}`;
    let killed = false;
    while (!this.stopped) {
      await new Promise((r) => setTimeout(r, this.d.pollMs ?? 1000).unref());
      if (this.d.live.getById(entry.id) !== entry || this.now() > giveUp) {
        await this.complete(row.id, { processStatus: 'unknown' });
        return;
      }
      try {
        const res = await fetch(url, { headers, signal: AbortSignal.timeout(5000) });
        if (res.status === 404) {
          await this.complete(row.id, { processStatus: 'unknown' });
          return;
        }
        const proc = (await res.json()) as ProcessResponse;
        if (proc.status !== 'running') {
          const logs = await fetch(`${url}/logs`, { headers, signal: AbortSignal.timeout(5000) });
          const body = logs.ok ? ((await logs.json()) as { logs?: string }) : {};
          await this.complete(row.id, {
            processStatus: proc.status,
            exitCode: proc.exitCode,
            completedAt: new Date(this.now()).toISOString(),
            output: (body.logs ?? '').slice(-MAX_EXECUTION_OUTPUT),
          });
          return;
        }
        if (timeout > 0 && !killed && this.now() > started + timeout * 1000 + 2000) {
          killed = true;
          await fetch(`${url}/kill`, { method: 'DELETE', headers, signal: AbortSignal.timeout(5000) });
        }
      } catch {
        // Frozen or busy: ask again on the next poll.
      }
    }
  }

  private async complete(id: string, patch: Partial<ScheduleExecution>): Promise<void> {
    await patchById<ScheduleExecution>(this.d.resources, id, (r) => ({
      spec: { ...r.spec, ...patch },
      status: EXECUTION_DONE,
      updatedAt: new Date(this.now()).toISOString(),
    })).catch((err: unknown) => this.d.logger.warn({ err, execution: id }, 'could not record an execution'));
  }
}

const systemOf = (row: ScheduleRow) => row.system as unknown as ScheduleSystem;
