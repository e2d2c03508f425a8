import { jobSpecSchema, type JobSpec } from '@tarmac/contract';
import type { ResourceRow, Store } from '@tarmac/store';
import { JOB_KIND } from '../../../framework/kinds.js';
import type { SecretBox } from '../../../framework/secrets.js';
import { secretContext, viewSpec } from '../workloads/workload-secrets.js';

/** A job for the jobs runtime (planes/jobs JobRecord): its spec with envs in clear. */
export interface RunnableJob {
  name: string;
  workspace: string;
  spec: JobSpec;
  envs: Record<string, string>;
}

/**
 * The job records as the jobs plane reads them (issue 17; compose.ts hands this in as its
 * `JobCatalogue`): secret envs opened, only for the runtime that puts them in a task's env, the
 * way the sandbox controller opens a sandbox's at start.
 */
export function jobReader(store: Store, secrets: SecretBox) {
  const read = (row: ResourceRow<JobSpec>, reveal = true): RunnableJob => {
    const revealed = reveal
      ? viewSpec(secrets, row.spec, secretContext(row.workspace, JOB_KIND, row.name), 'reveal')
      : row.spec;
    const parsed = jobSpecSchema.safeParse(revealed);
    const spec = parsed.success ? parsed.data : revealed;
    const envs: Record<string, string> = {};
    if (reveal) for (const e of spec.runtime.envs) envs[e.name] = e.value ?? '';
    return { name: row.name, workspace: row.workspace, spec, envs };
  };
  return {
    async get(workspace: string, name: string): Promise<RunnableJob | undefined> {
      const row = await store.resources.get<JobSpec>(workspace, JOB_KIND, name);
      return row && !row.terminatedAt && row.status !== 'DELETING' ? read(row) : undefined;
    },
    async withCronTriggers(): Promise<RunnableJob[]> {
      const rows = await store.resources.listByKind<JobSpec>(JOB_KIND);
      return (
        rows
          .filter((r) => r.status !== 'DELETING' && (r.spec.triggers ?? []).some((t) => t.type === 'cron'))
          // Schedules only: the envs stay sealed (the execution's create reads the job again).
          .map((row) => read(row, false))
      );
    },
  };
}
