import {
  scheduleRoutes as r,
  type ScheduleEntry,
  type ScheduleEntryInput,
  type ScheduleExecution,
} from '@tarmac/contract';
import type { TarmacClient } from '../client.js';

/**
 * `sandbox.schedules`: processes run inside the sandbox on a `cron` (5 fields, UTC), `at` (RFC
 * 3339) or `sleep` (a duration, stored as the `at` it resolves to) entry (reference §1.6).
 */
export class SandboxSchedules {
  constructor(
    private readonly client: TarmacClient,
    private readonly sandbox: string,
  ) {}

  private params(scheduleId: string) {
    return { sandboxName: this.sandbox, scheduleId };
  }

  /** Every schedule, optionally only one type. */
  list(type?: 'cron' | 'at'): Promise<ScheduleEntry[]> {
    return this.client
      .paginate(r.listSchedules, { params: { sandboxName: this.sandbox }, query: type ? { type } : {} })
      .all();
  }
  get(id: string): Promise<ScheduleEntry> {
    return this.client.request(r.getSchedule, { params: this.params(id) });
  }
  create(entry: ScheduleEntryInput): Promise<ScheduleEntry> {
    return this.client.request(r.createSchedule, { params: { sandboxName: this.sandbox }, body: entry });
  }
  update(id: string, entry: ScheduleEntryInput): Promise<ScheduleEntry> {
    return this.client.request(r.updateSchedule, { params: this.params(id), body: entry });
  }
  delete(id: string): Promise<ScheduleEntry> {
    return this.client.request(r.deleteSchedule, { params: this.params(id) });
  }
  /** Executions of every schedule of the sandbox, newest first. */
  executions(): Promise<ScheduleExecution[]> {
    return this.client.paginate(r.listScheduleExecutions, { params: { sandboxName: this.sandbox } }).all();
  }
}
