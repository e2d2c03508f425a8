/**
 * Cron triggers (issue 17; reference §2.5 `type: cron`, 5-field `schedule`, optional `tasks`):
 * schedules are read in UTC. Each tick (1 s) compares a trigger's next occurrence after the last
 * minute it was handled for with now:
 *  - at most one missed run is caught up after a restart: one execution, then the trigger counts
 *    as handled up to the current minute;
 *  - never twice for the same minute, even across a restart: the execution id is derived from the
 *    occurrence (`cron-<trigger>-<minute>`, idempotent create), and the handled minute is persisted
 *    (a `job-cron-state` row per job) right after.
 * A trigger seen for the first time starts counting from the current minute (no back-fill).
 */
import { Cron } from 'croner';
import type { ResourceRow } from '@tarmac/store';
import type { Logger } from 'pino';
import { JOB_CRON_STATE_KIND } from '../../framework/kinds.js';
import type { JobCatalogue, JobRecord } from './jobs-ports.js';

export interface CronStateStore {
  get<S>(workspace: string, kind: string, name: string, parent?: string): Promise<ResourceRow<S> | undefined>;
  create<S>(row: Omit<ResourceRow<S>, 'revision'>): Promise<ResourceRow<S>>;
  update<S>(
    id: string,
    patch: { system: Record<string, unknown>; updatedAt: string },
  ): Promise<ResourceRow<S>>;
}

export interface CronTriggersDeps {
  jobs: Pick<JobCatalogue, 'withCronTriggers'>;
  state: CronStateStore;
  fire(job: JobRecord, executionId: string, tasks: Record<string, unknown>[]): Promise<void>;
  logger: Logger;
  now?: () => number;
  tickMs?: number;
}

const MINUTE = 60_000;

/** The id of a cron trigger within its job: its own id, else its position. */
export function triggerKey(trigger: { id?: string | undefined }, index: number): string {
  const own = (trigger.id ?? '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 24);
  return own || `t${index}`;
}

/** The occurrence to fire now, if any: the first one after `lastMinute` that is not in the future. */
export function dueOccurrence(schedule: string, lastMinute: number, nowMs: number): number | undefined {
  const next = new Cron(schedule, { timezone: 'UTC', paused: true }).nextRun(new Date(lastMinute * MINUTE));
  if (!next || next.getTime() > nowMs) return undefined;
  return Math.floor(next.getTime() / MINUTE);
}

export class CronTriggers {
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;

  constructor(private readonly d: CronTriggersDeps) {}

  start(): void {
    this.timer = setInterval(() => {
      this.ticking ??= this.tick()
        .catch((err) => this.d.logger.error({ err }, 'cron trigger tick failed'))
        .finally(() => (this.ticking = undefined));
    }, this.d.tickMs ?? 1000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.ticking;
  }

  async tick(): Promise<void> {
    const now = (this.d.now ?? Date.now)();
    const minute = Math.floor(now / MINUTE);
    for (const job of await this.d.jobs.withCronTriggers()) {
      if (!job.spec.enabled) continue;
      const row = await this.d.state.get<unknown>(job.workspace, JOB_CRON_STATE_KIND, 'cron', job.name);
      const handled = { ...((row?.system.lastMinute as Record<string, number> | undefined) ?? {}) };
      let changed = false;
      for (const [i, t] of job.spec.triggers.entries()) {
        const schedule = t.configuration.schedule;
        if (t.type !== 'cron' || !t.enabled || !schedule) continue;
        const key = triggerKey(t, i);
        const last = handled[key];
        if (last === undefined) {
          handled[key] = minute;
          changed = true;
          continue;
        }
        if (last >= minute) continue;
        let due: number | undefined;
        try {
          due = dueOccurrence(schedule, last, now);
        } catch (err) {
          this.d.logger.warn({ err, job: job.name, schedule }, 'cron trigger has a bad schedule');
          continue;
        }
        if (due === undefined) continue;
        const tasks = (t.configuration.tasks as Record<string, unknown>[] | undefined) ?? [];
        try {
          await this.d.fire(job, `cron-${key}-${due}`, tasks);
        } catch (err) {
          // Retried next tick with the same id (idempotent): nothing is lost, nothing doubled.
          this.d.logger.warn(
            { err, job: job.name, trigger: key },
            'cron trigger could not start an execution',
          );
          continue;
        }
        handled[key] = minute;
        changed = true;
      }
      if (changed) await this.save(job, row, handled, now);
    }
  }

  private async save(
    job: JobRecord,
    row: ResourceRow<unknown> | undefined,
    lastMinute: Record<string, number>,
    now: number,
  ): Promise<void> {
    const at = new Date(now).toISOString();
    if (row) {
      await this.d.state.update(row.id, { system: { ...row.system, lastMinute }, updatedAt: at });
      return;
    }
    await this.d.state.create({
      id: crypto.randomUUID(),
      workspace: job.workspace,
      kind: JOB_CRON_STATE_KIND,
      parent: job.name,
      name: 'cron',
      displayName: null,
      externalId: null,
      labels: {},
      spec: {},
      status: null,
      state: null,
      system: { lastMinute },
      events: [],
      createdAt: at,
      updatedAt: at,
      createdBy: 'cron',
      updatedBy: 'cron',
      terminatedAt: null,
    });
  }
}
