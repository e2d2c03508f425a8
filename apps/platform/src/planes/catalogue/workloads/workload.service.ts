import type {
  CoreEvent,
  DeploymentStatus,
  Metadata,
  MetadataInput,
  RevisionConfiguration,
  RevisionMetadata,
} from '@tarmac/contract';
import { forbidden, type PageRequest, type PageResult, type WorkspaceAccess } from '@tarmac/server-kit';
import type { ResourceFilter, ResourceRow } from '@tarmac/store';
import { randomBytes } from 'node:crypto';
import { ResourceCollection, mapPage, type CollectionDeps } from '../../../framework/collection.js';
import { newEvent } from '../../../framework/events.js';
import { assertSameName, envelopeMetadata, eventsOf, metadataColumns } from '../../../framework/envelope.js';
import type { SecretBox } from '../../../framework/secrets.js';
import { CONNECTION_KIND, POLICY_KIND, assertReferencesExist } from './references.js';
import {
  checkRevisionConfig,
  revisionContent,
  revisionList,
  sameDeployment,
  type StoredRevision,
} from './revision-traffic.js';
import { sealSpec, secretContext, viewSpec, type SecretBearingSpec } from './workload-secrets.js';

/**
 * Agents, functions, models and jobs: stored specs that a runtime would deploy. There is no
 * workload runtime on this platform yet, so a new or changed workload is DEPLOYING with an event
 * saying so (never a fake DEPLOYED); a disabled one is DEACTIVATED. See modules/workloads/README.md.
 */
export interface WorkloadSpec extends SecretBearingSpec {
  enabled: boolean;
  policies: string[];
  integrationConnections?: string[];
  revision?: RevisionConfiguration | undefined;
}

export interface WorkloadKind {
  /** Kind stored in the resources table, e.g. `agent`. */
  kind: string;
  /** Noun in messages, e.g. `Agent`. */
  label: string;
  /** What the missing runtime would do, e.g. `running agents`. */
  runtimeWork: string;
  /** `resourceTypes` value a policy must list to apply to this kind (jobs: none in reference §2.3). */
  policyResourceType?: string;
  /** `metadata.url`: where the workload is (or will be) served. */
  url(workspace: string, name: string): string;
  /**
   * When the platform serves an enabled record of this kind at once (models: the model gateway,
   * issue 18), the DEPLOYED event's message; undefined keeps DEPLOYING "waiting for a runtime".
   */
  servedAtOnce?: (spec: unknown) => string | undefined;
  /**
   * What must end before the record goes (jobs: their executions are cancelled and their task
   * containers removed, issue 17). The record is DELETING meanwhile, so nothing new starts on it.
   */
  beforeDelete?: (workspace: string, name: string) => Promise<void>;
  /**
   * The run plane (planes/run, issue 16) deploys this kind: an enabled record is DEPLOYING until a
   * replica answers, a disabled one DEACTIVATING until its replicas are gone; the run controller
   * writes DEPLOYED / FAILED / DEACTIVATED.
   */
  runPlane?: boolean;
}

export interface WorkloadDeps extends CollectionDeps {
  secrets: SecretBox;
}

export interface WorkloadView<Spec> {
  metadata: Metadata;
  spec: Spec;
  events: CoreEvent[];
  status: DeploymentStatus;
}

const MAX_REVISIONS = 20;

export interface WorkloadInput<Spec> {
  metadata: MetadataInput;
  spec: Spec;
}

export class WorkloadService<Spec extends WorkloadSpec> {
  private readonly rows: ResourceCollection<Spec>;

  constructor(
    private readonly deps: WorkloadDeps,
    private readonly def: WorkloadKind,
  ) {
    this.rows = new ResourceCollection<Spec>(deps, def.kind, def.label);
  }

  async list(
    ws: WorkspaceAccess,
    page: PageRequest,
    filter: ResourceFilter,
  ): Promise<PageResult<WorkloadView<Spec>>> {
    return mapPage(await this.rows.list(ws.name, page, filter), (row) => this.view(row, 'mask'));
  }

  /** `show_secrets=true` reveals secret values to workspace admins only (spec Authentication rule 4). */
  async get(access: WorkspaceAccess, name: string, showSecrets: boolean): Promise<WorkloadView<Spec>> {
    if (showSecrets && access.role !== 'admin') {
      throw forbidden(`show_secrets needs the admin role in workspace "${access.name}"`);
    }
    return this.view(await this.rows.get(access.name, name), showSecrets ? 'reveal' : 'mask');
  }

  async create(ws: WorkspaceAccess, actor: string, input: WorkloadInput<Spec>): Promise<WorkloadView<Spec>> {
    const workspace = ws.name;
    await this.checkReferences(workspace, input.spec);
    if (this.def.runPlane) checkRevisionConfig(input.spec.revision, []);
    const name = input.metadata.name;
    const sealed = sealSpec(
      this.deps.secrets,
      input.spec,
      secretContext(workspace, this.def.kind, name),
      undefined,
    );
    const event = this.deploymentEvent(input.spec, undefined);
    const row = await this.rows.create({
      workspace,
      name,
      actor,
      ...metadataColumns(input.metadata),
      spec: sealed.spec,
      status: event.status,
      system: { revisions: [this.newRevision(actor, sealed.spec)] },
      event,
    });
    return this.view(row, 'mask', sealed.generatedSecrets);
  }

  /** PUT: replaces spec, displayName and labels; with `upsert` (models) creates a missing one. */
  async update(
    ws: WorkspaceAccess,
    actor: string,
    name: string,
    input: WorkloadInput<Spec>,
    upsert = false,
  ): Promise<WorkloadView<Spec>> {
    const workspace = ws.name;
    assertSameName(name, input.metadata.name);
    const before = await this.rows.find(workspace, name);
    if (!before) {
      if (upsert) return this.create(ws, actor, input);
      await this.rows.get(workspace, name); // the 404
    }
    const row = before!;
    await this.checkReferences(workspace, input.spec);
    const stored = this.storedRevisions(row);
    if (this.def.runPlane)
      checkRevisionConfig(
        input.spec.revision,
        stored.map((r) => r.id),
      );
    const context = secretContext(workspace, this.def.kind, name);
    const sealed = sealSpec(this.deps.secrets, input.spec, context, row.spec);
    const event = this.deploymentEvent(input.spec, row);
    // Run-plane kinds: a write that changes only the traffic (spec.revision) or enabled/public
    // makes no revision (revision-traffic.ts); any other change makes one, as before.
    const reveal = (spec: Spec) => viewSpec(this.deps.secrets, spec, context, 'reveal');
    const same =
      this.def.runPlane && stored.length > 0 && sameDeployment(reveal(row.spec), reveal(sealed.spec));
    const revisions = same
      ? stored
      : [this.newRevision(actor, sealed.spec), ...stored].slice(0, MAX_REVISIONS);
    const updated = await this.rows.update(
      row,
      {
        ...metadataColumns(input.metadata, row),
        spec: sealed.spec,
        status: event.status,
        system: { ...row.system, revisions },
      },
      actor,
      event,
    );
    return this.view(updated, 'mask', sealed.generatedSecrets);
  }

  /** Removes the workload; the answer is the resource as it was, marked DELETING (reference §0). */
  async delete(ws: WorkspaceAccess, name: string): Promise<WorkloadView<Spec>> {
    let row = await this.rows.get(ws.name, name);
    if (this.def.beforeDelete) {
      row = await this.rows.mutate(ws.name, name, 'system', async (r) =>
        r.status === 'DELETING' ? undefined : { patch: { status: 'DELETING' } },
      );
      await this.def.beforeDelete(ws.name, name);
    }
    await this.rows.remove(row);
    return { ...this.view(row, 'mask'), status: 'DELETING' };
  }

  /**
   * `RevisionMetadata[]` newest first (reference §1.1), with the traffic `spec.revision` configures
   * (revision-traffic.ts): without one, the newest is active and takes all of it.
   */
  async revisions(ws: WorkspaceAccess, name: string): Promise<RevisionMetadata[]> {
    const row = await this.rows.get(ws.name, name);
    const config = this.def.runPlane ? row.spec.revision : undefined;
    return revisionList(this.storedRevisions(row), config, row.status ?? 'DEPLOYING');
  }

  private async checkReferences(workspace: string, spec: Spec): Promise<void> {
    await assertReferencesExist(
      this.deps.store,
      workspace,
      CONNECTION_KIND,
      'spec.integrationConnections',
      spec.integrationConnections ?? [],
      'integration connection',
    );
    const type = this.def.policyResourceType;
    await assertReferencesExist(
      this.deps.store,
      workspace,
      POLICY_KIND,
      'spec.policies',
      spec.policies,
      'policy',
      (row) => {
        const types = (row.spec as { resourceTypes?: string[] }).resourceTypes ?? [];
        return type && !types.includes(type)
          ? `policy "${row.name}" does not apply to resource type ${type}`
          : undefined;
      },
    );
  }

  private deploymentEvent(spec: Spec, row: ResourceRow<Spec> | undefined): CoreEvent {
    const now = this.deps.now();
    if (!spec.enabled && this.def.runPlane) {
      const message = `${this.def.label} is disabled (spec.enabled is false); stopping its replicas`;
      return newEvent(row, 'deployment', 'DEACTIVATING', message, now);
    }
    if (!spec.enabled) {
      return newEvent(
        row,
        'deployment',
        'DEACTIVATED',
        `${this.def.label} is disabled (spec.enabled is false)`,
        now,
      );
    }
    if (this.def.runPlane) {
      const image = (spec.runtime as { image?: string } | undefined)?.image;
      const message = image
        ? `Accepted; starting a replica of image ${image}`
        : 'Accepted; waiting for an image: deploy the code (tarmac deploy) or set spec.runtime.image';
      return newEvent(row, 'deployment', 'DEPLOYING', message, now);
    }
    const served = this.def.servedAtOnce?.(spec);
    if (served) return newEvent(row, 'deployment', 'DEPLOYED', served, now);
    return newEvent(
      row,
      'deployment',
      'DEPLOYING',
      `Accepted; waiting for a runtime: ${this.def.runtimeWork} is not implemented on this platform yet`,
      now,
    );
  }

  /** A revision remembers what its replicas run (secrets still sealed): it can run again later. */
  private newRevision(actor: string, spec: Spec): StoredRevision {
    return {
      id: randomBytes(6).toString('hex'),
      createdAt: this.deps.now().toISOString(),
      createdBy: actor,
      ...(this.def.runPlane ? { content: revisionContent(spec) } : {}),
    };
  }

  private storedRevisions(row: ResourceRow<Spec>): StoredRevision[] {
    return (row.system.revisions as StoredRevision[] | undefined) ?? [];
  }

  private view(
    row: ResourceRow<Spec>,
    secrets: 'mask' | 'reveal',
    generated?: ReadonlyMap<string, string>,
  ): WorkloadView<Spec> {
    const context = secretContext(row.workspace, this.def.kind, row.name);
    return {
      metadata: envelopeMetadata(row, this.def.url(row.workspace, row.name)),
      spec: viewSpec(this.deps.secrets, row.spec, context, secrets, generated),
      events: eventsOf(row),
      status: (row.status ?? 'DEPLOYING') as DeploymentStatus,
    };
  }
}
