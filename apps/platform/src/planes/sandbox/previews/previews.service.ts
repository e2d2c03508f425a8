import type { Preview, PreviewInput, PreviewSpec, SandboxSpec } from '@tarmac/contract';
import { conflict, invalidField, notFound, type PageRequest, type WorkspaceAccess } from '@tarmac/server-kit';
import type { ResourceRow } from '@tarmac/store';
import { randomBytes } from 'node:crypto';
import { sandboxApiExposure } from './sandbox-api-exposure.js';
import { ResourceCollection, mapPage, type CollectionDeps } from '../../../framework/collection.js';
import { newEvent } from '../../../framework/events.js';
import { customDomainUrl, previewHostUrl } from '../../../framework/hosts.js';
import { assertSameName } from '../../../framework/envelope.js';
import type { SandboxesService } from '../records/sandboxes.service.js';
import { PreviewTokens } from './preview-tokens.js';
import { PREVIEW_KIND } from '../../../framework/kinds.js';
export { PREVIEW_KIND } from '../../../framework/kinds.js';

/**
 * Sandbox previews (spec "Sandbox preview"; reference §1.6, §2.6): records under their sandbox
 * (`parent` = sandbox name). `spec.url` is `<preview-id>.<region>.preview.<domain>` or, with a
 * custom domain, `<prefixUrl>.preview.<customDomain>`; two previews of a workspace may not share a
 * custom domain + prefix URL — `force=true` replaces the older ones (spec "Management API").
 */
export class PreviewsService {
  readonly col: ResourceCollection<PreviewSpec>;
  readonly tokens: PreviewTokens;

  constructor(
    private readonly deps: CollectionDeps,
    private readonly sandboxes: SandboxesService,
  ) {
    this.col = new ResourceCollection<PreviewSpec>(deps, PREVIEW_KIND, 'Preview');
    this.tokens = new PreviewTokens(deps, this);
  }

  view(row: ResourceRow<PreviewSpec>): Preview {
    const region = typeof row.system.region === 'string' ? row.system.region : this.deps.hosts.region;
    const previewId = typeof row.system.previewId === 'string' ? row.system.previewId : row.id;
    const url = row.spec.customDomain
      ? customDomainUrl(this.deps.hosts, row.spec.customDomain, row.spec.prefixUrl)
      : previewHostUrl(this.deps.hosts, previewId, region);
    return {
      metadata: {
        name: row.name,
        displayName: row.displayName ?? row.name,
        resourceName: row.parent,
        resourceType: 'sandbox',
        workspace: row.workspace,
        createdAt: row.createdAt,
        updatedAt: row.updatedAt,
        createdBy: row.createdBy,
        updatedBy: row.updatedBy,
      },
      spec: { ...row.spec, region, url },
      events: row.events.map((e) => ({ ...e })),
      status: (row.status ?? 'DEPLOYED') as Preview['status'],
    };
  }

  /** The live sandbox a preview hangs off (404 when missing or terminated). */
  async sandbox(ws: WorkspaceAccess, sandboxName: string): Promise<ResourceRow<SandboxSpec>> {
    const row = await this.sandboxes.col.get(ws.name, sandboxName);
    if (row.terminatedAt) throw notFound(`Sandbox "${sandboxName}"`);
    return row;
  }

  async list(ws: WorkspaceAccess, sandboxName: string, page: PageRequest) {
    await this.sandbox(ws, sandboxName);
    return mapPage(await this.col.list(ws.name, page, { parent: sandboxName }), (r) => this.view(r));
  }

  async get(ws: WorkspaceAccess, sandboxName: string, name: string): Promise<Preview> {
    await this.sandbox(ws, sandboxName);
    return this.view(await this.col.get(ws.name, name, sandboxName));
  }

  async create(ws: WorkspaceAccess, actor: string, sandboxName: string, body: PreviewInput, force = false) {
    const sandbox = await this.sandbox(ws, sandboxName);
    this.checkSpec(body.spec);
    await this.resolveConflicts(ws.name, sandboxName, body.metadata.name, body.spec, force);
    const event = newEvent(
      undefined,
      'preview',
      'DEPLOYED',
      `Preview of port ${body.spec.port} created`,
      this.deps.now(),
    );
    const row = await this.col.create({
      workspace: ws.name,
      parent: sandboxName,
      name: body.metadata.name,
      actor,
      displayName: body.metadata.displayName ?? null,
      externalId: null,
      labels: {},
      spec: body.spec,
      status: 'DEPLOYED',
      system: {
        previewId: randomBytes(8).toString('hex'),
        region: sandbox.spec.region ?? this.deps.hosts.region,
      },
      event,
    });
    return this.view(row);
  }

  async update(
    ws: WorkspaceAccess,
    actor: string,
    sandboxName: string,
    name: string,
    body: PreviewInput,
    force = false,
  ) {
    await this.sandbox(ws, sandboxName);
    assertSameName(name, body.metadata.name);
    const row = await this.col.get(ws.name, name, sandboxName);
    this.checkSpec(body.spec);
    await this.resolveConflicts(ws.name, sandboxName, name, body.spec, force);
    const event = newEvent(row, 'preview', 'DEPLOYED', 'Preview updated', this.deps.now());
    const patch = { spec: body.spec, displayName: body.metadata.displayName ?? row.displayName };
    return this.view(await this.col.update(row, patch, actor, event));
  }

  /** Deletes the preview and its tokens; returns the deleted preview. */
  async delete(ws: WorkspaceAccess, sandboxName: string, name: string): Promise<Preview> {
    await this.sandbox(ws, sandboxName);
    const row = await this.col.get(ws.name, name, sandboxName);
    await this.tokens.removeAll(ws.name, sandboxName, name);
    await this.col.remove(row);
    const event = newEvent(row, 'preview', 'DELETING', 'Preview deleted', this.deps.now());
    return this.view({ ...row, status: 'DELETING', events: [...row.events, event] });
  }

  /** Removes every preview of a sandbox and their tokens (the sandbox is being deleted). */
  async removeAllOf(workspace: string, sandboxName: string): Promise<void> {
    for (;;) {
      const page = await this.col.list(
        workspace,
        { sort: 'createdAt:asc', limit: 200 },
        { parent: sandboxName },
      );
      for (const row of page.items) {
        await this.tokens.removeAll(workspace, sandboxName, row.name);
        await this.col.remove(row);
      }
      if (!page.hasMore) return;
    }
  }

  private checkSpec(spec: PreviewSpec): void {
    const exposure = sandboxApiExposure(spec.port, spec.public === true);
    if (exposure) throw invalidField('spec.port', exposure);
    if (spec.prefixUrl !== undefined && spec.customDomain === undefined) {
      throw invalidField('spec.prefixUrl', 'needs spec.customDomain (it prefixes the custom domain)');
    }
  }

  /** Previews of the workspace with the same custom domain and prefix URL: a 409, or removed with force. */
  private async resolveConflicts(
    workspace: string,
    sandboxName: string,
    name: string,
    spec: PreviewSpec,
    force: boolean,
  ) {
    if (!spec.customDomain) return;
    const all = await this.deps.store.resources.listByKind<PreviewSpec>(PREVIEW_KIND);
    const clashing = all.filter(
      (p) =>
        p.workspace === workspace &&
        !(p.parent === sandboxName && p.name === name) &&
        p.spec.customDomain === spec.customDomain &&
        (p.spec.prefixUrl ?? '') === (spec.prefixUrl ?? ''),
    );
    if (clashing.length === 0) return;
    if (!force) {
      const names = clashing.map((p) => `${p.parent}/${p.name}`).join(', ');
      throw conflict(
        `spec.customDomain: ${spec.customDomain} with this prefixUrl is used by preview ${names}; use force=true to replace`,
      );
    }
    for (const p of clashing) {
      await this.tokens.removeAll(workspace, p.parent, p.name);
      await this.col.remove(p);
    }
  }
}
