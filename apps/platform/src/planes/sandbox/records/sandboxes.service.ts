import { type Sandbox, type SandboxCreate, type SandboxSpec, type SandboxUpdate } from '@tarmac/contract';
import {
  conflict,
  forbidden,
  invalidField,
  type PageRequest,
  type WorkspaceAccess,
} from '@tarmac/server-kit';
import type { ResourceRow } from '@tarmac/store';
import { randomBytes } from 'node:crypto';
import { ResourceCollection, listFilter, mapPage } from '../../../framework/collection.js';
import { newEvent } from '../../../framework/events.js';
import { assertSameName, metadataColumns } from '../../../framework/envelope.js';
import type { SecretView } from '../../../framework/secrets.js';
import { sandboxSecretContext, sealSandboxSpec } from './sandbox-secrets.js';
import { SANDBOX_KIND } from '../../../framework/kinds.js';
import { claimFromPool } from './pool-claim.js';
import { checkImage, checkMemory, checkNetwork, withoutNulls } from './sandbox-spec-checks.js';
import { alreadyExists, GONE, previousOf } from './sandbox-names.js';
import { viewSandbox } from './sandbox-view.js';
import type { SandboxServiceDeps } from './sandboxes.deps.js';
/** Kind string of sandbox records in the resources table (contract with the controller: README.md). */
export { SANDBOX_KIND } from '../../../framework/kinds.js';
export type { SandboxServiceDeps, SandboxWatch } from './sandboxes.deps.js';

interface ListQuery {
  status?: string[] | undefined;
  showTerminated?: boolean | undefined;
  externalId?: string | undefined;
}

/**
 * The sandbox API service: validates and writes the desired spec, appends an event and publishes
 * a change notice; the sandbox controller (issue 4) makes it run and writes status/state back.
 */
export class SandboxesService {
  readonly col: ResourceCollection<SandboxSpec>;

  constructor(private readonly deps: SandboxServiceDeps) {
    this.col = new ResourceCollection<SandboxSpec>(deps, SANDBOX_KIND, 'Sandbox');
  }

  view(row: ResourceRow<SandboxSpec>, secrets: SecretView = 'mask'): Sandbox {
    return viewSandbox(this.deps, row, secrets);
  }

  async list(ws: WorkspaceAccess, page: PageRequest, query: ListQuery) {
    return mapPage(await this.col.list(ws.name, page, listFilter(query)), (r) => this.view(r));
  }

  /** `show_secrets=true` reveals secret values to workspace admins only (spec "Authentication" 4). */
  async get(ws: WorkspaceAccess, name: string, showSecrets = false): Promise<Sandbox> {
    if (showSecrets && ws.role !== 'admin') {
      throw forbidden('show_secrets=true requires the workspace admin role');
    }
    return this.view(await this.col.get(ws.name, name), showSecrets ? 'reveal' : 'mask');
  }

  async getByExternalId(ws: WorkspaceAccess, externalId: string): Promise<Sandbox> {
    return this.view(await this.col.getByExternalId(ws.name, externalId));
  }

  async create(
    ws: WorkspaceAccess,
    actor: string,
    body: SandboxCreate,
    createIfNotExist = false,
    /** System fields the new record starts with (a fork's `seedSnapshot`, snapshots.service.ts). */
    system?: Record<string, unknown>,
    /** False after a claim failed at its end: this create boots the normal way. */
    fromPool = true,
  ): Promise<Sandbox> {
    const name = body.metadata.name ?? `sandbox-${randomBytes(4).toString('hex')}`;
    const existing = await previousOf(this.col, this.deps, ws.name, name);
    if (existing) {
      if (createIfNotExist && !GONE.has(existing.status ?? '')) return this.view(existing);
      throw alreadyExists(ws.name, name, this.deps.now());
    }
    const spec: SandboxSpec = withoutNulls({
      ...body.spec,
      region: body.spec.region ?? this.deps.hosts.region,
    });
    checkNetwork(spec);
    checkMemory(spec, this.deps.maxMemoryMB);
    await checkImage(this.deps.validateImage, ws.name, name, spec);
    const holder = `sandbox:${name}`;
    for (const [i, volume] of (spec.volumes ?? []).entries()) {
      await this.deps.volumes.require(ws.name, volume.name).catch(() => {
        throw invalidField(`spec.volumes.${i}.name`, `volume "${volume.name}" does not exist`);
      });
    }
    const sealed = sealSandboxSpec(this.deps.secrets, spec, sandboxSecretContext(ws.name, name));
    const disabled = spec.enabled === false;
    // A fork (system set) boots on its snapshot's files, a disabled sandbox not at all: never pooled.
    const claimed =
      system || disabled || !fromPool
        ? undefined
        : await claimFromPool(this.deps, ws.name, name, spec, sealed);
    const now = this.deps.now();
    const status = claimed ? 'DEPLOYED' : disabled ? 'DEACTIVATED' : 'DEPLOYING';
    const event = claimed
      ? // Billing starts here (metering reads Deployment/DEPLOYED as RUNNING): the claim, not the boot.
        newEvent(undefined, 'Deployment', 'DEPLOYED', 'Sandbox is running: claimed from the warm pool', now)
      : newEvent(
          undefined,
          'deployment',
          status,
          disabled
            ? 'Sandbox created disabled (spec.enabled: false): not started nor served until enabled'
            : 'Sandbox created; waiting to be started',
          now,
        );
    let raced = false;
    const row = await this.col
      .create(
        {
          ...(claimed ? { id: claimed.recordId } : {}),
          workspace: ws.name,
          name,
          actor,
          ...metadataColumns(body.metadata),
          spec: sealed,
          status,
          ...(claimed
            ? {
                state: 'RUNNING',
                system: {
                  engineId: claimed.engineId,
                  ip: claimed.ip,
                  deployedAt: now.toISOString(),
                  pooled: true,
                  ...(claimed.imageSizeBytes !== undefined ? { imageSizeBytes: claimed.imageSizeBytes } : {}),
                },
              }
            : system
              ? { system }
              : {}),
          event,
        },
        () => alreadyExists(ws.name, name, this.deps.now()),
      )
      .catch(async (err: unknown) => {
        void claimed?.discard(); // never back to the pool, never to another create
        // Lost a race with a concurrent create of the same name: answer as if we had seen it.
        const winner = createIfNotExist ? await this.col.find(ws.name, name) : undefined;
        if (!winner || winner.terminatedAt || GONE.has(winner.status ?? '')) throw err;
        raced = true;
        return winner;
      });
    if (claimed && !raced) {
      // Live only once it has its hostname (requests meanwhile wait as for a starting sandbox;
      // the controller leaves a record being claimed alone: WarmPool.owns).
      const ready = await claimed.ready.then(
        () => true,
        () => false,
      );
      if (!ready) {
        // Undone as if the pool had been empty: no record of the member, the member destroyed
        // (its engine id is the record's), then this create again, booting the normal way.
        try {
          await this.col.remove(row);
        } finally {
          await claimed.discard();
        }
        return this.create(ws, actor, body, createIfNotExist, system, false);
      }
      this.deps.pool?.adopt(row, claimed);
    }
    if (raced) return this.view(row);
    try {
      await this.attachVolumes(ws.name, holder, spec, [], actor);
    } catch (err) {
      // Undo: the sandbox must not exist half-made, holding some of its volumes.
      await this.detachVolumes(ws.name, holder, spec.volumes ?? [], actor);
      await this.col.remove(row);
      throw err;
    }
    return this.view(row);
  }

  async update(ws: WorkspaceAccess, actor: string, name: string, body: SandboxUpdate): Promise<Sandbox> {
    assertSameName(name, body.metadata.name);
    const updated = await this.col.mutate(ws.name, name, actor, async (row) => {
      if ((row.terminatedAt || GONE.has(row.status ?? '')) && row.status !== 'FAILED') {
        throw conflict(`Sandbox "${name}" is being deleted (${row.status ?? ''})`);
      }
      const spec: SandboxSpec = withoutNulls({
        ...body.spec,
        region: body.spec.region ?? row.spec.region ?? this.deps.hosts.region,
      });
      if (spec.region !== row.spec.region) {
        throw invalidField('spec.region', `is immutable after creation (is "${row.spec.region ?? ''}")`);
      }
      // extraArgs are fixed when the sandbox is made (reference sandbox-api §5: immutable).
      if (
        JSON.stringify(spec.runtime?.extraArgs ?? {}) !== JSON.stringify(row.spec.runtime?.extraArgs ?? {})
      ) {
        throw invalidField('spec.runtime.extraArgs', 'is immutable after creation');
      }
      checkNetwork(spec);
      checkMemory(spec, this.deps.maxMemoryMB);
      if (spec.runtime?.image !== row.spec.runtime?.image)
        await checkImage(this.deps.validateImage, ws.name, name, spec);
      const holder = `sandbox:${name}`;
      await this.attachVolumes(ws.name, holder, spec, row.spec.volumes ?? [], actor);
      const kept = new Set((spec.volumes ?? []).map((v) => v.name));
      await this.detachVolumes(
        ws.name,
        holder,
        (row.spec.volumes ?? []).filter((v) => !kept.has(v.name)),
        actor,
      );
      const sealed = sealSandboxSpec(this.deps.secrets, spec, sandboxSecretContext(ws.name, name), row.spec);
      // spec.enabled: false stops serving it (issue 14 item 8): the controller freezes it and
      // says DEACTIVATED (reference: "DEACTIVATING and DEACTIVATED happen when enabled=false");
      // enabled again, it deploys like any spec change and resumes where it stopped.
      const disabled = spec.enabled === false;
      const status = disabled ? 'DEACTIVATING' : 'DEPLOYING';
      return {
        patch: { ...metadataColumns(body.metadata, row), spec: sealed, status },
        event: newEvent(
          row,
          'deployment',
          status,
          disabled
            ? 'Sandbox disabled (spec.enabled: false); it stops being served'
            : 'Sandbox spec updated; waiting to be applied',
          this.deps.now(),
        ),
      };
    });
    return this.view(updated);
  }

  /** Marks the sandbox DELETING; the controller stops it, sets TERMINATED and frees its volumes. */
  async delete(ws: WorkspaceAccess, actor: string, name: string): Promise<Sandbox> {
    const row = await this.col.mutate(ws.name, name, actor, async (current) => {
      if (current.terminatedAt || current.status === 'DELETING') return undefined;
      return {
        patch: { status: 'DELETING' },
        event: newEvent(current, 'deployment', 'DELETING', 'Sandbox deletion requested', this.deps.now()),
      };
    });
    await this.deps.onDelete?.(ws.name, name);
    return this.view(row);
  }

  private async attachVolumes(
    workspace: string,
    holder: string,
    spec: SandboxSpec,
    already: NonNullable<SandboxSpec['volumes']>,
    actor: string,
  ): Promise<void> {
    const held = new Set(already.map((v) => v.name));
    for (const [i, volume] of (spec.volumes ?? []).entries()) {
      if (held.has(volume.name) || volume.type === 'ephemeral') continue;
      await this.deps.volumes.attach(workspace, volume.name, holder, `spec.volumes.${i}.name`, actor);
    }
  }

  async detachVolumes(
    workspace: string,
    holder: string,
    volumes: NonNullable<SandboxSpec['volumes']>,
    actor: string,
  ): Promise<void> {
    for (const volume of volumes) await this.deps.volumes.detach(workspace, volume.name, holder, actor);
  }
}
