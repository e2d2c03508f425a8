import {
  DEFAULT_SCHEDULE_EXECUTIONS,
  SECRET_MASK,
  type ScheduleEntry,
  type ScheduleEntryInput,
  type ScheduleExecution,
} from '@tarmac/contract';
import { conflict, invalidField, notFound, type PageRequest, type WorkspaceAccess } from '@tarmac/server-kit';
import type { ResourceRow } from '@tarmac/store';
import { randomBytes } from 'node:crypto';
import { ResourceCollection, mapPage, type CollectionDeps } from '../../../framework/collection.js';
import { newEvent } from '../../../framework/events.js';
import { SANDBOX_SCHEDULE_EXECUTION_KIND, SANDBOX_SCHEDULE_KIND } from '../../../framework/kinds.js';
import type { SandboxesService } from '../records/sandboxes.service.js';
import {
  afterOf,
  scheduleSecretContext,
  sealEnv,
  type ScheduleRow,
  type ScheduleSpec,
  type ScheduleSystem,
} from './schedule-record.js';
import { nextInstant, resolveTiming } from './schedule-timing.js';

/** Schedules one sandbox may have (issue 14 item 6: "a huge schedule list is refused"). */
export const DEFAULT_MAX_SCHEDULES_PER_SANDBOX = 50;

/**
 * Sandbox schedules (reference control-plane §1.6, `SandboxScheduleEntry`): records under their
 * sandbox. This half validates and stores; the runner (schedule-runner.ts) fires them.
 */
export class SchedulesService {
  readonly col: ResourceCollection<ScheduleSpec>;
  readonly executions: ResourceCollection<ScheduleExecution>;

  constructor(
    private readonly deps: CollectionDeps,
    private readonly sandboxes: SandboxesService,
    private readonly maxPerSandbox = DEFAULT_MAX_SCHEDULES_PER_SANDBOX,
  ) {
    this.col = new ResourceCollection<ScheduleSpec>(deps, SANDBOX_SCHEDULE_KIND, 'Schedule');
    this.executions = new ResourceCollection<ScheduleExecution>(
      deps,
      SANDBOX_SCHEDULE_EXECUTION_KIND,
      'Schedule execution',
    );
  }

  view(row: ScheduleRow): ScheduleEntry {
    const system = row.system as unknown as ScheduleSystem;
    const after = afterOf(row);
    const env = row.spec.input.env;
    return {
      id: row.name,
      type: row.spec.type,
      value: row.spec.value,
      input: {
        ...row.spec.input,
        ...(env ? { env: Object.fromEntries(Object.keys(env).map((k) => [k, SECRET_MASK])) } : {}),
      },
      maxExecutions: row.spec.maxExecutions,
      sandbox: row.parent,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
      nextRunAt: nextInstant(row.spec, after)?.toISOString() ?? null,
      lastRunAt: system.lastRunAt ?? null,
    };
  }

  private async sandbox(ws: WorkspaceAccess, sandboxName: string) {
    const row = await this.sandboxes.col.get(ws.name, sandboxName);
    if (row.terminatedAt) throw notFound(`Sandbox "${sandboxName}"`);
    return row;
  }

  async list(ws: WorkspaceAccess, sandboxName: string, page: PageRequest, type?: 'cron' | 'at') {
    await this.sandbox(ws, sandboxName);
    const filter = { parent: sandboxName, ...(type ? { status: [type] } : {}) };
    return mapPage(await this.col.list(ws.name, page, filter), (r) => this.view(r));
  }

  async get(ws: WorkspaceAccess, sandboxName: string, id: string): Promise<ScheduleEntry> {
    await this.sandbox(ws, sandboxName);
    return this.view(await this.col.get(ws.name, id, sandboxName));
  }

  async create(ws: WorkspaceAccess, actor: string, sandboxName: string, body: ScheduleEntryInput) {
    await this.sandbox(ws, sandboxName);
    const count = await this.col.list(ws.name, { sort: 'createdAt:desc', limit: 1 }, { parent: sandboxName });
    if (count.total >= this.maxPerSandbox) {
      throw conflict(`Sandbox "${sandboxName}" has ${count.total} schedules, the most it may have`);
    }
    const id = body.id ?? `schedule-${randomBytes(5).toString('hex')}`;
    const now = this.deps.now();
    const spec = this.spec(ws.name, sandboxName, id, body, now);
    const system: ScheduleSystem = { armedAt: now.toISOString(), executions: [] };
    const row = await this.col.create({
      workspace: ws.name,
      parent: sandboxName,
      name: id,
      actor,
      displayName: null,
      externalId: null,
      labels: {},
      spec,
      status: spec.type,
      system: system as unknown as Record<string, unknown>,
      event: newEvent(undefined, 'schedule', 'DEPLOYED', `Schedule ${spec.type} ${spec.value}`, now),
    });
    return this.view(row);
  }

  async update(
    ws: WorkspaceAccess,
    actor: string,
    sandboxName: string,
    id: string,
    body: ScheduleEntryInput,
  ): Promise<ScheduleEntry> {
    await this.sandbox(ws, sandboxName);
    if (body.id !== undefined && body.id !== id) throw invalidField('id', `is immutable (is "${id}")`);
    const row = await this.col.mutate(
      ws.name,
      id,
      actor,
      async (current) => {
        const now = this.deps.now();
        const spec = this.spec(ws.name, sandboxName, id, body, now);
        const system = { ...(current.system as unknown as ScheduleSystem), armedAt: now.toISOString() };
        return {
          patch: { spec, status: spec.type, system: system as unknown as Record<string, unknown> },
          event: newEvent(current, 'schedule', 'DEPLOYED', `Schedule ${spec.type} ${spec.value}`, now),
        };
      },
      sandboxName,
    );
    return this.view(row);
  }

  /** Deletes the schedule and its execution records; returns the deleted schedule. */
  async delete(ws: WorkspaceAccess, sandboxName: string, id: string): Promise<ScheduleEntry> {
    await this.sandbox(ws, sandboxName);
    const row = await this.col.get(ws.name, id, sandboxName);
    await this.col.remove(row);
    await this.removeExecutions(row);
    return this.view(row);
  }

  async listExecutions(ws: WorkspaceAccess, sandboxName: string, page: PageRequest) {
    await this.sandbox(ws, sandboxName);
    return mapPage(await this.executions.list(ws.name, page, { parent: sandboxName }), (r) => r.spec);
  }

  /** Removes every schedule of a sandbox and every execution record (the sandbox is being deleted). */
  async removeAllOf(workspace: string, sandboxName: string): Promise<void> {
    for (const col of [this.col, this.executions] as ResourceCollection<unknown>[]) {
      for (;;) {
        const page = await col.list(
          workspace,
          { sort: 'createdAt:asc', limit: 200 },
          { parent: sandboxName },
        );
        for (const row of page.items) await col.remove(row);
        if (!page.hasMore || page.items.length === 0) break;
      }
    }
  }

  private async removeExecutions(row: ScheduleRow): Promise<void> {
    for (const executionId of (row.system as unknown as ScheduleSystem).executions ?? []) {
      const ex = await this.executions.find(row.workspace, executionId, row.parent);
      if (ex) await this.executions.remove(ex as ResourceRow<ScheduleExecution>);
    }
  }

  private spec(
    workspace: string,
    sandboxName: string,
    id: string,
    body: ScheduleEntryInput,
    now: Date,
  ): ScheduleSpec {
    let timing;
    try {
      timing = resolveTiming(body.type, body.value, now);
    } catch (err) {
      throw invalidField('value', (err as Error).message);
    }
    const env = sealEnv(this.deps.secrets, body.input.env, scheduleSecretContext(workspace, sandboxName, id));
    return {
      ...timing,
      input: { ...body.input, ...(env ? { env } : {}) },
      maxExecutions: body.maxExecutions ?? DEFAULT_SCHEDULE_EXECUTIONS,
    };
  }
}
