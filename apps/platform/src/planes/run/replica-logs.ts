/**
 * `GET /v0/{agents|functions|applications}/{name}/replicas/logs` (issue 16: "stdout/stderr are the workload's
 * logs, readable with `tarmac logs {kind} {name} [-f]` and a logs route"): the output replicas
 * that ended left in the archive (framework/log-archive.ts, the jobs plane's task logs too), then
 * the current replica's own log from the engine, from byte `offset`.
 */
import { EXIT_MARKER } from '@tarmac/engine';
import type { ReplicaLogs } from '@tarmac/contract';
import { notFound } from '@tarmac/server-kit';
import type { LogArchive } from '../../framework/log-archive.js';
import type { RunController } from './run-controller.js';
import type { ReplicaEngine, RunKind } from './run-ports.js';

const PAGE_BYTES = 1024 * 1024;
const LABELS = { agent: 'Agent', function: 'Function', application: 'Application' } as const;

export interface ReplicaLogsDeps {
  controller: Pick<RunController, 'record' | 'sets'>;
  engine: Pick<ReplicaEngine, 'readLog'>;
  logs: LogArchive;
}

export async function replicaLogs(
  d: ReplicaLogsDeps,
  kind: RunKind,
  workspace: string,
  name: string,
  offset: number,
  followed: string | undefined,
): Promise<ReplicaLogs> {
  const record = d.controller.record(kind, workspace, name);
  if (!record) throw notFound(`${LABELS[kind]} "${name}"`);
  const archived = offset === 0 && !followed ? clean(d.logs.read(record.id, 0)) : '';
  // Not readyReplica: reading logs must neither resume a replica in STANDBY nor count as a use.
  const current =
    d.controller.sets.serving(record.id, record.revision) ??
    d.controller.sets.setsOf(record.id).flatMap((s) => s.replicas)[0];
  if (!current) return { replica: null, archived, text: '', next: 0 };
  const from = followed === current.engineId ? offset : 0;
  const page = await d.engine.readLog(current.engineId, from, PAGE_BYTES);
  return { replica: current.engineId, archived, text: clean(page.text), next: page.next };
}

/** The engine's exit-code line is bookkeeping, not the workload's output. */
const clean = (text: string) =>
  text
    .split('\n')
    .filter((l) => !l.startsWith(EXIT_MARKER))
    .join('\n');
