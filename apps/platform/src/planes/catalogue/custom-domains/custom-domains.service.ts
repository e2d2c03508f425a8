import type { CustomDomain, CustomDomainSpec, MetadataInput } from '@tarmac/contract';
import type { PageRequest, PageResult, WorkspaceAccess } from '@tarmac/server-kit';
import type { ResourceRow } from '@tarmac/store';
import { createHash } from 'node:crypto';
import { ResourceCollection, mapPage } from '../../../framework/collection.js';
import { newEvent } from '../../../framework/events.js';
import { assertSameName, envelopeMetadata, eventsOf, metadataColumns } from '../../../framework/envelope.js';
import type { CollectionDeps } from '../../../framework/collection.js';
import { CUSTOM_DOMAIN_KIND } from '../../../framework/kinds.js';
export { CUSTOM_DOMAIN_KIND } from '../../../framework/kinds.js';

/**
 * Custom domains (reference §1.15). The name is the domain. A new domain is `pending` with the DNS
 * records its owner must publish: a CNAME to the platform's preview host and a TXT challenge.
 * Verification (`POST .../verify`, a DNS lookup) belongs to the previews/ingress work and is not
 * served yet, so the status stays `pending`.
 */
type Input = {
  metadata: MetadataInput;
  spec: Pick<CustomDomainSpec, 'domainType' | 'region' | 'fallbackPreviewId' | 'subjectAlternativeNames'>;
};

export class CustomDomainsService {
  private readonly rows: ResourceCollection<CustomDomainSpec>;

  constructor(
    private readonly deps: CollectionDeps,
    private readonly apiUrl: () => string,
    /** Host the CNAME record points at (the platform's preview ingress). */
    private readonly cnameTarget: () => string,
  ) {
    this.rows = new ResourceCollection(deps, CUSTOM_DOMAIN_KIND, 'Custom domain');
  }

  async list(ws: WorkspaceAccess, page: PageRequest): Promise<PageResult<CustomDomain>> {
    const workspace = ws.name;
    return mapPage(await this.rows.list(workspace, page), (row) => this.view(row));
  }

  async get(ws: WorkspaceAccess, name: string): Promise<CustomDomain> {
    const workspace = ws.name;
    return this.view(await this.rows.get(workspace, name.toLowerCase()));
  }

  async create(ws: WorkspaceAccess, actor: string, input: Input): Promise<CustomDomain> {
    const workspace = ws.name;
    const name = input.metadata.name;
    const spec: CustomDomainSpec = {
      ...input.spec,
      status: 'pending',
      cnameRecords: this.cnameTarget(),
      txtRecords: {
        [`_tarmac-challenge.${name}`]: createHash('sha256')
          .update(`${workspace}/${name}`)
          .digest('hex')
          .slice(0, 32),
      },
    };
    const row = await this.rows.create({
      workspace,
      name,
      actor,
      ...metadataColumns(input.metadata),
      spec,
      status: 'pending',
      event: newEvent(
        undefined,
        'verification',
        'pending',
        'Publish the CNAME and TXT records, then verify',
        this.deps.now(),
      ),
    });
    return this.view(row);
  }

  async update(ws: WorkspaceAccess, actor: string, name: string, input: Input): Promise<CustomDomain> {
    const workspace = ws.name;
    assertSameName(name.toLowerCase(), input.metadata.name);
    const row = await this.rows.get(workspace, name.toLowerCase());
    // Server-owned fields (status, records, verification) are kept; the caller's fields are replaced.
    const spec: CustomDomainSpec = { ...row.spec, ...input.spec };
    const event = newEvent(row, 'configuration', row.spec.status, 'Domain settings updated', this.deps.now());
    return this.view(
      await this.rows.update(row, { ...metadataColumns(input.metadata, row), spec }, actor, event),
    );
  }

  async delete(ws: WorkspaceAccess, name: string): Promise<CustomDomain> {
    const workspace = ws.name;
    const row = await this.rows.get(workspace, name.toLowerCase());
    await this.rows.remove(row);
    return this.view(row);
  }

  private view(row: ResourceRow<CustomDomainSpec>): CustomDomain {
    return {
      metadata: envelopeMetadata(row, `${this.apiUrl()}/v0/customdomains/${row.name}`),
      spec: row.spec,
      events: eventsOf(row),
    };
  }
}
