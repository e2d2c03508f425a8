/**
 * After a platform restart (ARCHITECTURE.md "Restart survival"): replica containers are not
 * children of the platform and kept running, so every running `rp-` container becomes a replica
 * again, rebuilt from its labels (record, revision, slot, kind, name) — no new container, the same
 * process. Stopped ones are archived and removed. Each re-attached replica gets a short probe: it
 * served before the restart, so it answers at once; one that does not is replaced (removed here,
 * started again by the controller's first pass) rather than holding the gateway's first answers.
 * A replica the engine shows FROZEN was in STANDBY (idle-policy.ts): it stays frozen, in STANDBY,
 * until a request resumes it (a TCP probe would prove nothing: the kernel accepts connections for a
 * frozen listener). A running one is thawed first, in case the platform stopped mid-freeze.
 */
import type { Logger } from 'pino';
import { REPLICA_PORT, REPLICA_PREFIX } from './replica-container.js';
import type { IdlePolicy } from './idle-policy.js';
import type { ReplicaLauncher } from './replica-launcher.js';
import type { Replica, ReplicaSets } from './replica-sets.js';
import type { ReplicaEngine } from './run-ports.js';

/** How long a re-attached replica has to answer after a platform restart. */
export const ADOPT_PROBE_MS = 3000;

export interface AdoptionDeps {
  engine: Pick<ReplicaEngine, 'list' | 'thawSync'>;
  idle: Pick<IdlePolicy, 'adoptFrozen'>;
  sets: ReplicaSets;
  launcher: Pick<ReplicaLauncher, 'probe' | 'remove'> & Partial<Pick<ReplicaLauncher, 'metered'>>;
  logger: Logger;
  now: () => number;
}

export async function adoptReplicas(d: AdoptionDeps): Promise<void> {
  for (const info of await d.engine.list()) {
    const l = info.labels;
    if (!info.id.startsWith(REPLICA_PREFIX) || !l.record || !l.revision) continue;
    const slot = Number(l.slot ?? 0);
    const attempt = Number(info.id.split('-').at(-1)) || 1;
    if (info.status === 'STOPPED') {
      await d.launcher.remove(info.id, l.record, slot, attempt).catch(() => undefined);
      continue;
    }
    const kind = l.runKind === 'function' || l.runKind === 'application' ? l.runKind : 'agent';
    const [workspace, name] = [l.workspace ?? '', l.runName ?? ''];
    // Metered again from now (the downtime is not known: planes/metering/ARCHITECTURE.md).
    await d.launcher.metered?.(
      { id: l.record, kind, workspace, name, memoryMB: info.memoryMB },
      info.id,
      info.image,
    );
    const set = d.sets.set(l.record, l.revision);
    set.nextAttempt = Math.max(set.nextAttempt, attempt + 1);
    if (info.status !== 'FROZEN') {
      try {
        d.engine.thawSync(info.id); // a freeze the previous platform had asked for but not settled
      } catch {
        // not frozen, or its cgroup is gone: the probe below decides
      }
    }
    const replica: Replica = {
      engineId: info.id,
      recordId: l.record,
      kind,
      workspace,
      name,
      revision: l.revision,
      slot,
      attempt,
      ip: info.ip,
      port: Number(l.port) || REPLICA_PORT, // containers from before the label: 8080
      phase: 'starting',
      // The label names it; replicas started before the label existed used `<record>.rp<slot>`.
      credentialId: l.credential ?? `${l.record}.rp${slot}`,
      readyAtMs: undefined,
      inflight: 0,
      lastUsedMs: d.now(),
    };
    if (info.status === 'FROZEN') d.idle.adoptFrozen(replica);
    set.replicas.push(replica);
  }
  await Promise.all(
    d.sets.all().map(async (r) => {
      if (r.phase === 'standby') return;
      const out = await d.launcher.probe(r, () => true, ADOPT_PROBE_MS); // ends a start-up boost
      if (out.kind === 'ready') return;
      d.logger.warn({ replica: r.engineId }, 're-attached replica does not answer; replacing it');
      d.sets.remove(r);
      await d.launcher.remove(r.engineId, r.recordId, r.slot, r.attempt, 0).catch(() => undefined);
    }),
  );
}
