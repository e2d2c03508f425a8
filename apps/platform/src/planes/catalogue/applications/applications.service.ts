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
import { applicationUrl } from '../../../framework/hosts.js';
import { secretContext } from '../workloads/workload-secrets.js';
import { newestRevisionEntry } from './app-revision-input.js';
import { assertHostsFree, checkUrls } from './app-urls.js';
import type { WorkloadDeps } from '../workloads/workload.service.js';
import { APPLICATION_KIND } from '../../../framework/kinds.js';
export { APPLICATION_KIND } from '../../../framework/kinds.js';

/**
 * Applications (spec "Application"; reference §1.5): long-running public deployments, run by the
 * run plane (planes/run, issue 16) and served on their own host (`metadata.url`) and on the hosts
 * of `spec.urls[]` (app-urls.ts). `PUT` upserts; every create or update generates a revision from
 * the body — the image of `spec.image` or of the newest `spec.revisions[]` entry (the spec's and
 * the reference CLI's shape), else the current one — with envs, memory and port; `status` is the
 * plain string of the newest event (spec: "computed from events").
 */
const MAX_REVISIONS = 20;

/** `?upload=true` (issue 15): `spec.image` may be missing; the build sets it. */
interface UploadOption {
  upload?: boolean;
}

/** What the row stores: the caller's spec (envs sealed) plus the generated revisions. */
type StoredSpec = Omit<ApplicationSpecInput, 'revisions' | 'envs' | 'memory' | 'port'> & {
  envs: AppRevision['envs'];
  memory: number;
  port: number;
  revisions: AppRevision[];
};
const DEFAULT_MEMORY_MB = 2048;
/** The reference's default (§1.5 `port` default 8080), the same PORT agents get. */
const DEFAULT_PORT = 8080;

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
    await this.checkHosts(workspace, name, spec);
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
    await this.checkHosts(workspace, name, spec);
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

  /** 400 for a host the platform owns, 409 for one another application claims (app-urls.ts). */
  private async checkHosts(workspace: string, name: string, spec: StoredSpec): Promise<void> {
    const own = [this.deps.apiUrl(), this.runUrl()].flatMap((u) => {
      try {
        return [new URL(u).hostname.toLowerCase()];
      } catch {
        return [];
      }
    });
    checkUrls(spec.urls, this.deps.hosts.domain, own);
    await assertHostsFree(this.deps.store, workspace, name, spec.urls, this.deps.hosts.domain);
  }

  /**
   * Seals secret envs and prepends a revision made from the body (reference §1.5). The image is
   * `spec.image`, else the newest `spec.revisions[]` entry's (app-revision-input.ts), else — on an
   * update — the current one. With `?upload=true` and no image, the image is the build's to set
   * (issue 15): the previous one stays (a failed build leaves it serving) and the build adds the
   * revision when it is BUILT. Flat fields (`envs`, `memory`, `port`) win over the entry's.
   */
  private nextSpec(
    workspace: string,
    name: string,
    actor: string,
    input: ApplicationSpecInput,
    before: StoredSpec | undefined,
    options: UploadOption,
  ): StoredSpec {
    const { revisions: entries, ...rest } = input;
    const entry = newestRevisionEntry(entries);
    // A masked secret copied from a revision the caller read keeps that revision's sealed value.
    const known = entry?.id ? before?.revisions.find((r) => r.id === entry.id) : undefined;
    const envs =
      sealEnvs(
        this.deps.secrets,
        rest.envs ?? entry?.envs ?? [],
        secretContext(workspace, APPLICATION_KIND, name),
        [...(before?.envs ?? []), ...(known?.envs ?? [])],
      ) ?? [];
    const memory = rest.memory ?? entry?.memory ?? DEFAULT_MEMORY_MB;
    const port = rest.port ?? entry?.port ?? DEFAULT_PORT;
    const given = rest.image ?? entry?.image;
    if (given === undefined && options.upload) {
      const kept = before?.image;
      return {
        ...rest,
        ...(kept !== undefined ? { image: kept } : {}),
        envs,
        memory,
        port,
        ...(before?.revision ? { revision: { ...before.revision, ...rest.revision } } : {}),
        revisions: before?.revisions ?? [],
      };
    }
    const image = given ?? before?.image;
    if (image === undefined) {
      throw invalidField(
        'body.spec.revisions',
        'needs an entry with an image (or set spec.image, or create with ?upload=true to build one)',
      );
    }
    const revision: AppRevision = {
      id: randomBytes(6).toString('hex'),
      image,
      envs,
      memory,
      port,
      createdAt: this.deps.now().toISOString(),
      createdBy: actor,
    };
    return {
      ...rest,
      image,
      envs,
      memory,
      port,
      // Without an explicit choice, the newest revision is the active one.
      revision: { ...rest.revision, active: rest.revision?.active ?? revision.id },
      revisions: [revision, ...(before?.revisions ?? [])].slice(0, MAX_REVISIONS),
    };
  }

  private deploymentEvent(spec: StoredSpec, row: ResourceRow<StoredSpec> | undefined) {
    const now = this.deps.now();
    // The run plane writes DEPLOYED / FAILED once a replica answers or not, DEACTIVATED once the
    // replicas are gone (planes/run/ARCHITECTURE.md "Status").
    if (!spec.enabled) {
      const message = 'Application is disabled (spec.enabled is false); stopping its replicas';
      return newEvent(row, 'deployment', 'DEACTIVATING', message, now);
    }
    const message = spec.image
      ? `Accepted; starting a replica of image ${spec.image} listening on port ${spec.port}`
      : 'Accepted; waiting for an image: deploy the code (tarmac deploy) or send spec.revisions[].image';
    return newEvent(row, 'deployment', 'DEPLOYING', message, now);
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
      // Its own host (reference §5.2 per-workload hostnames, `app-` like `agt-`/`mcp-`).
      metadata: envelopeMetadata(row, applicationUrl(this.deps.hosts, row.workspace, row.name)),
      spec,
      events: eventsOf(row),
      status: statusFromEvents(row.events),
    };
  }
}
