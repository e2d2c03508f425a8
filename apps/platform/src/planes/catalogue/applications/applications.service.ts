import type {
  AppRevision,
  Application,
  ApplicationSpec,
  ApplicationSpecInput,
  MetadataInput,
} from '@tarmac/contract';
import { invalidField, type PageRequest, type PageResult, type WorkspaceAccess } from '@tarmac/server-kit';
import type { ResourceFilter, ResourceRow } from '@tarmac/store';
import { randomBytes } from 'node:crypto';
import { ResourceCollection, mapPage } from '../../../framework/collection.js';
import { newEvent, statusFromEvents } from '../../../framework/events.js';
import { assertSameName, envelopeMetadata, eventsOf, metadataColumns } from '../../../framework/envelope.js';
import { sealEnvs, viewEnvs } from '../../../framework/secrets.js';
import { secretContext } from '../workloads/workload-secrets.js';
import type { WorkloadDeps } from '../workloads/workload.service.js';
import { APPLICATION_KIND } from '../../../framework/kinds.js';
export { APPLICATION_KIND } from '../../../framework/kinds.js';

/**
 * Applications (spec "Application"; reference §1.5): long-running public deployments. `PUT`
 * upserts; every create or update generates a revision from the spec (image, envs, memory, port);
 * `status` is the plain string of the newest event (spec: "computed from events").
 */
const MAX_REVISIONS = 20;

/** `?upload=true` (issue 15): `spec.image` may be missing; the build sets it. */
interface UploadOption {
  upload?: boolean;
}

/** What the row stores: the caller's spec (envs sealed) plus the generated revisions. */
type StoredSpec = Omit<ApplicationSpecInput, 'revisions'> & { revisions: AppRevision[] };

export class ApplicationsService {
  private readonly rows: ResourceCollection<StoredSpec>;

  constructor(
    private readonly deps: WorkloadDeps,
    private readonly runUrl: () => string,
  ) {
    this.rows = new ResourceCollection<StoredSpec>(deps, APPLICATION_KIND, 'Application');
  }

  async list(
    ws: WorkspaceAccess,
    page: PageRequest,
    filter: ResourceFilter,
  ): Promise<PageResult<Application>> {
    const workspace = ws.name;
    return mapPage(await this.rows.list(workspace, page, filter), (row) => this.view(row));
  }

  async get(ws: WorkspaceAccess, name: string): Promise<Application> {
    const workspace = ws.name;
    return this.view(await this.rows.get(workspace, name));
  }

  async create(
    ws: WorkspaceAccess,
    actor: string,
    input: { metadata: MetadataInput; spec: ApplicationSpecInput },
    options: UploadOption = {},
  ) {
    const workspace = ws.name;
    const name = input.metadata.name;
    const spec = this.nextSpec(workspace, name, actor, input.spec, undefined, options);
    const event = this.deploymentEvent(spec, undefined);
    const row = await this.rows.create({
      workspace,
      name,
      actor,
      ...metadataColumns(input.metadata),
      spec,
      status: event.status,
      event,
    });
    return this.view(row);
  }

  /** PUT upserts (spec Management API: `PUT /v0/applications/{applicationName}`). */
  async put(
    ws: WorkspaceAccess,
    actor: string,
    name: string,
    input: { metadata: MetadataInput; spec: ApplicationSpecInput },
    options: UploadOption = {},
  ): Promise<Application> {
    const workspace = ws.name;
    assertSameName(name, input.metadata.name);
    const before = await this.rows.find(workspace, name);
    if (!before) return this.create(ws, actor, input, options);
    const spec = this.nextSpec(workspace, name, actor, input.spec, before.spec, options);
    const event = this.deploymentEvent(spec, before);
    const updated = await this.rows.update(
      before,
      { ...metadataColumns(input.metadata, before), spec, status: event.status },
      actor,
      event,
    );
    return this.view(updated);
  }

  async delete(ws: WorkspaceAccess, name: string): Promise<Application> {
    const workspace = ws.name;
    const row = await this.rows.get(workspace, name);
    await this.rows.remove(row);
    return { ...this.view(row), status: 'DELETING' };
  }

  async revisions(ws: WorkspaceAccess, name: string): Promise<AppRevision[]> {
    const workspace = ws.name;
    const row = await this.rows.get(workspace, name);
    return this.view(row).spec.revisions;
  }

  /**
   * Seals secret envs and prepends a revision generated from the new spec (reference §1.5). With
   * `?upload=true` and no `image`, the image is the build's to set (issue 15): the previous one
   * stays (a failed build leaves it serving) and the build adds the revision when it is BUILT.
   */
  private nextSpec(
    workspace: string,
    name: string,
    actor: string,
    input: ApplicationSpecInput,
    before: StoredSpec | undefined,
    options: UploadOption,
  ): StoredSpec {
    const { revisions: _ignored, ...rest } = input;
    if (rest.image === undefined) {
      if (!options.upload) throw invalidField('body.spec.image', 'is required');
      const kept = before?.image;
      const envs =
        sealEnvs(
          this.deps.secrets,
          rest.envs,
          secretContext(workspace, APPLICATION_KIND, name),
          before?.envs,
        ) ?? [];
      return {
        ...rest,
        ...(kept !== undefined ? { image: kept } : {}),
        envs,
        ...(before?.revision ? { revision: { ...before.revision, ...rest.revision } } : {}),
        revisions: before?.revisions ?? [],
      };
    }
    const envs =
      sealEnvs(
        this.deps.secrets,
        rest.envs,
        secretContext(workspace, APPLICATION_KIND, name),
        before?.envs,
      ) ?? [];
    const revision: AppRevision = {
      id: randomBytes(6).toString('hex'),
      image: rest.image,
      envs,
      memory: rest.memory,
      port: rest.port,
      createdAt: this.deps.now().toISOString(),
      createdBy: actor,
    };
    return {
      ...rest,
      envs,
      // Without an explicit choice, the newest revision is the active one.
      revision: { ...rest.revision, active: rest.revision?.active ?? revision.id },
      revisions: [revision, ...(before?.revisions ?? [])].slice(0, MAX_REVISIONS),
    };
  }

  private deploymentEvent(spec: StoredSpec, row: ResourceRow<StoredSpec> | undefined) {
    const now = this.deps.now();
    return spec.enabled
      ? newEvent(
          row,
          'deployment',
          'DEPLOYING',
          'Accepted; waiting for a runtime: running applications is not implemented on this platform yet',
          now,
        )
      : newEvent(row, 'deployment', 'DEACTIVATED', 'Application is disabled (spec.enabled is false)', now);
  }

  private view(row: ResourceRow<StoredSpec>): Application {
    const context = secretContext(row.workspace, APPLICATION_KIND, row.name);
    const mask = (envs: StoredSpec['envs']) => viewEnvs(this.deps.secrets, envs, context, 'mask') ?? [];
    const spec: ApplicationSpec = {
      ...row.spec,
      envs: mask(row.spec.envs),
      revisions: row.spec.revisions.map((r) => ({ ...r, envs: mask(r.envs) })),
    };
    return {
      metadata: envelopeMetadata(row, `${this.runUrl()}/${row.workspace}/applications/${row.name}`),
      spec,
      events: eventsOf(row),
      status: statusFromEvents(row.events),
    };
  }
}
