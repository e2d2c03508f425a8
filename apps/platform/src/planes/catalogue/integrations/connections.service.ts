import type { IntegrationConnection, IntegrationConnectionSpec, MetadataInput } from '@tarmac/contract';
import { conflict, type PageRequest, type PageResult, type WorkspaceAccess } from '@tarmac/server-kit';
import type { ResourceRow } from '@tarmac/store';
import { ResourceCollection, mapPage } from '../../../framework/collection.js';
import { newEvent } from '../../../framework/events.js';
import { assertSameName, envelopeMetadata, eventsOf, metadataColumns } from '../../../framework/envelope.js';
import { sealMap, viewMap } from '../../../framework/secrets.js';
import { CONNECTION_KIND, referrers } from '../workloads/references.js';
import { secretContext } from '../workloads/workload-secrets.js';
import type { WorkloadDeps } from '../workloads/workload.service.js';

/**
 * Integration connections (spec "Integration connection and function"; reference §1.11): stored
 * credentials. `spec.secret` values are sealed at rest and masked in every response — there is no
 * show_secrets here; the platform hands them to workloads, never back to callers. A connection that
 * a function or model names cannot be deleted (409).
 */
type Input = { metadata: MetadataInput; spec: IntegrationConnectionSpec };

export class ConnectionsService {
  private readonly rows: ResourceCollection<IntegrationConnectionSpec>;

  constructor(
    private readonly deps: WorkloadDeps,
    private readonly apiUrl: () => string,
  ) {
    this.rows = new ResourceCollection(deps, CONNECTION_KIND, 'Integration connection');
  }

  async list(ws: WorkspaceAccess, page: PageRequest): Promise<PageResult<IntegrationConnection>> {
    const workspace = ws.name;
    return mapPage(await this.rows.list(workspace, page), (row) => this.view(row));
  }

  async get(ws: WorkspaceAccess, name: string): Promise<IntegrationConnection> {
    const workspace = ws.name;
    return this.view(await this.rows.get(workspace, name));
  }

  async create(ws: WorkspaceAccess, actor: string, input: Input): Promise<IntegrationConnection> {
    const workspace = ws.name;
    const name = input.metadata.name;
    const spec = this.seal(workspace, name, input.spec, undefined);
    const row = await this.rows.create({
      workspace,
      name,
      actor,
      ...metadataColumns(input.metadata),
      spec,
      status: null,
      event: newEvent(
        undefined,
        'configuration',
        'DEPLOYED', // the deployment status enum only (spec "Events" rule 1): in effect at once
        `Connection to ${spec.integration} created`,
        this.deps.now(),
      ),
    });
    return this.view(row);
  }

  async update(
    ws: WorkspaceAccess,
    actor: string,
    name: string,
    input: Input,
  ): Promise<IntegrationConnection> {
    const workspace = ws.name;
    assertSameName(name, input.metadata.name);
    const row = await this.rows.get(workspace, name);
    const spec = this.seal(workspace, name, input.spec, row.spec);
    const event = newEvent(
      row,
      'configuration',
      'DEPLOYED',
      `Connection to ${spec.integration} updated`,
      this.deps.now(),
    );
    return this.view(
      await this.rows.update(row, { ...metadataColumns(input.metadata, row), spec }, actor, event),
    );
  }

  async delete(ws: WorkspaceAccess, name: string): Promise<IntegrationConnection> {
    const workspace = ws.name;
    const row = await this.rows.get(workspace, name);
    const users = [
      ...(await referrers(this.deps.store, workspace, 'function', 'integrationConnections', name)).map(
        (n) => `function "${n}"`,
      ),
      ...(await referrers(this.deps.store, workspace, 'model', 'integrationConnections', name)).map(
        (n) => `model "${n}"`,
      ),
    ];
    if (users.length > 0) {
      throw conflict(`Integration connection "${name}" is in use by ${users.join(', ')}; detach it first`);
    }
    await this.rows.remove(row);
    return this.view(row);
  }

  /** A masked value sent back (GET then PUT) keeps the stored one; anything else is sealed anew. */
  private seal(
    workspace: string,
    name: string,
    spec: IntegrationConnectionSpec,
    before: IntegrationConnectionSpec | undefined,
  ): IntegrationConnectionSpec {
    const context = secretContext(workspace, CONNECTION_KIND, name);
    return { ...spec, secret: sealMap(this.deps.secrets, spec.secret, context, before?.secret) ?? {} };
  }

  private view(row: ResourceRow<IntegrationConnectionSpec>): IntegrationConnection {
    const context = secretContext(row.workspace, CONNECTION_KIND, row.name);
    return {
      metadata: envelopeMetadata(row, `${this.apiUrl()}/v0/integrations/connections/${row.name}`),
      spec: { ...row.spec, secret: viewMap(this.deps.secrets, row.spec.secret, context, 'mask') ?? {} },
      events: eventsOf(row),
    };
  }
}
