/**
 * The engine spec of one replica: the sandbox engine's container (same userns, seccomp, cgroup
 * limits, bridge and egress proxy as a sandbox or a job task) running the image's Entrypoint + Cmd
 * (`command: []`, packages/engine command-exit.ts) instead of sandboxd. The container contract
 * (README.md): the platform sets PORT/HOST (and the `BL_SERVER_*` names code written for the
 * public platform reads, reference control-plane.md §5.1); the workload listens there.
 * Env, lowest first: egress defaults (proxy with this replica's own credentials, CA), the record's
 * env (runtime.envs, connection keys), then the contract's variables, which a user env cannot
 * override (reserved, §5.1).
 */
import { createHash } from 'node:crypto';
import type { HostFile, SandboxSpec } from '@tarmac/engine';
import type { RunKind, RunRecord } from './run-ports.js';

/**
 * The port agent and function replicas listen on (reference §5.1 leaves the value to the
 * platform); an application's is its `spec.port` (RunRecord.port).
 */
export const REPLICA_PORT = 8080;
/** IPv4 on the bridge: the gateway reaches replicas over it (`::` would do too, v4 is plainer). */
export const REPLICA_HOST = '0.0.0.0';
/** Engine ids of replicas start with this: the controller adopts exactly these after a restart. */
export const REPLICA_PREFIX = 'rp-';

/** Stable, short, valid engine id: record, revision and slot (like the job runner's task ids). */
export function replicaEngineId(recordId: string, revision: string, slot: number, attempt: number): string {
  const digest = createHash('sha256').update(recordId).digest('hex').slice(0, 12);
  const rev = revision.replace(/[^a-z0-9]/g, '').slice(0, 12) || 'r';
  return `${REPLICA_PREFIX}${digest}-${rev}-${slot}-${attempt}`;
}

/**
 * The replica's proxy user (its egress identity): the record id, the slot and the revision — two
 * revisions run side by side (a canary, a rollout), and the proxy checks one address per user.
 */
export function replicaCredentialId(recordId: string, slot: number, revision: string): string {
  return `${recordId}.rp${slot}.${revision.replace(/[^a-z0-9]/g, '').slice(0, 12) || 'r'}`;
}

/** The record id of a replica's proxy user, or undefined when it is not a replica's. */
export function recordOfReplicaCredential(id: string): string | undefined {
  // Without the revision: replicas started before it was part of the id (re-attached, label-less).
  return /^([0-9a-f-]{36})\.rp\d+(?:\.[a-z0-9]{1,12})?$/.exec(id)?.[1];
}

export interface ReplicaContainerInput {
  engineId: string;
  /** Its egress identity (replicaCredentialId), kept as a label for re-attachment. */
  credentialId: string;
  record: RunRecord;
  image: string;
  slot: number;
  env: Record<string, string>;
  defaults: { env: Record<string, string>; files: HostFile[] };
  /** Cores until it answers (a start-up boost, ended by the launcher); 0: none. */
  startupCpuCores?: number;
}

const TYPE_NAMES: Record<RunKind, string> = {
  agent: 'agent',
  function: 'function',
  application: 'application',
};

export function replicaContainerSpec(r: ReplicaContainerInput): SandboxSpec {
  const { record } = r;
  const env: Record<string, string> = { ...r.defaults.env, ...r.env };
  Object.assign(env, {
    PORT: String(record.port),
    BL_SERVER_PORT: String(record.port),
    HOST: REPLICA_HOST,
    BL_SERVER_HOST: REPLICA_HOST,
    BL_WORKSPACE: record.workspace,
    BL_NAME: record.name,
    BL_TYPE: TYPE_NAMES[record.kind],
  });
  return {
    id: r.engineId,
    image: r.image,
    memoryMB: record.memoryMB,
    ...(r.startupCpuCores ? { startupCpuCores: r.startupCpuCores } : {}),
    env,
    hostname: record.name.slice(0, 63),
    ports: [],
    volumes: [],
    files: r.defaults.files,
    // `record`: the orphan reaper keeps a container whose record (the agent/function row) exists.
    labels: {
      workspace: record.workspace,
      record: record.id,
      runKind: record.kind,
      runName: record.name,
      revision: record.revision,
      slot: String(r.slot),
      // Where it listens: a restarted platform probes and forwards there (replica-adoption.ts).
      port: String(record.port),
      credential: r.credentialId,
    },
    command: [],
  };
}
