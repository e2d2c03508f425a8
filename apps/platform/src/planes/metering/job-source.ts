import type { ResourceRow, Repositories } from '@tarmac/store';
import type { AccountOf } from './resource-sources.js';
import type { Observation, Rate, RateChange, UsageSource } from './source.js';

const MB_PER_GB = 1024;
const BYTES_PER_GB = 1024 ** 3;
/** The jobs plane's event type: `status` is the number of task containers from `time` on. */
export const JOB_TASKS_EVENT = 'Tasks';
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled', 'timeout']);
/** Ended executions still reported to the meter (longer than its longest interval, 1 h). */
const RECENT_MS = 2 * 3600_000;

interface ExecutionSystem {
  plan?: { memoryMB?: number; imageSizeBytes?: number };
  runs?: { phase: string }[];
  completedAt?: string;
}

/**
 * Job executions (spec "Billing entities", raw type `job`, named after the job): each task
 * container's memory → job_compute_runtime_gbs, and the job image's bytes → job_image_storage_gbs
 * while any task container of the execution exists. Rates change where the jobs plane recorded a
 * `Tasks` event (planes/jobs/execution-rows.ts); an execution ends at its completedAt.
 */
export function jobSource(store: Pick<Repositories, 'resources'>, accountOf: AccountOf): UsageSource {
  const ratesFor = (sys: ExecutionSystem, containers: number): Rate[] => {
    if (containers <= 0) return [];
    const rates: Rate[] = [];
    const memoryGb = (sys.plan?.memoryMB ?? 0) / MB_PER_GB;
    if (memoryGb > 0) rates.push({ dimension: 'job_compute_runtime_gbs', perSecond: containers * memoryGb });
    const bytes = sys.plan?.imageSizeBytes ?? 0;
    if (bytes > 0) rates.push({ dimension: 'job_image_storage_gbs', perSecond: bytes / BYTES_PER_GB });
    return rates;
  };
  return {
    kind: 'job-execution',
    async observe(known) {
      const live = await store.resources.listByKind('job-execution');
      const seen = new Set(live.map((r) => r.id));
      const gone = await Promise.all(
        [...known].filter((id) => !seen.has(id)).map((id) => store.resources.getById(id)),
      );
      const rows = [...live, ...gone.filter((r): r is ResourceRow => r !== undefined)];
      const out: Observation[] = [];
      for (const row of rows) {
        const sys = row.system as ExecutionSystem;
        const terminal = TERMINAL.has(row.status ?? '');
        const completed = sys.completedAt ? Date.parse(sys.completedAt) : undefined;
        const tracked = known.has(row.id);
        // Finished before the meter's window and not tracked: nothing left to charge.
        if (terminal && !tracked && !(completed !== undefined && completed > Date.now() - RECENT_MS))
          continue;
        const accountId = await accountOf(row.workspace);
        if (!accountId) continue;
        const changes: RateChange[] = row.events
          .filter((e) => e.type === JOB_TASKS_EVENT)
          .map((e) => ({ at: Date.parse(e.time), rates: ratesFor(sys, Number(e.status)) }))
          .filter((c) => !Number.isNaN(c.at))
          .sort((a, b) => a.at - b.at);
        const containers = (sys.runs ?? []).filter(
          (r) => r.phase === 'starting' || r.phase === 'running',
        ).length;
        // An execution that started and ended between two passes is first reported without its end
        // (the meter charges a new resource from its first recorded change, not one that ended);
        // its `Tasks` events bring the rate to zero where its containers stopped.
        const endedAt = tracked ? completed : undefined;
        out.push({
          resource: {
            accountId,
            workspace: row.workspace,
            resourceType: 'job',
            resourceName: row.parent,
            resourceUuid: row.id,
          },
          rates: terminal ? [] : ratesFor(sys, containers),
          changes,
          ...(terminal && endedAt !== undefined && !Number.isNaN(endedAt) ? { endedAt } : {}),
        });
      }
      return out;
    },
  };
}
