import type { PreviewToken, PreviewTokenInput } from '@tarmac/contract';
import { invalidField, type PageRequest, type WorkspaceAccess } from '@tarmac/server-kit';
import type { ResourceRow } from '@tarmac/store';
import { randomBytes } from 'node:crypto';
import { ResourceCollection, mapPage, type CollectionDeps } from '../../../framework/collection.js';
import { newEvent } from '../../../framework/events.js';
import { hashSecret, secretMatches } from '../../../framework/credentials.js';
import { PREVIEW_TOKEN_KIND } from '../../../framework/kinds.js';
export { PREVIEW_TOKEN_KIND } from '../../../framework/kinds.js';

const TOKEN_PREFIX = 'tpv_';

/** What tokens need of the previews service: that the preview exists (handed in; no import back). */
export interface PreviewLookup {
  get(ws: WorkspaceAccess, sandboxName: string, previewName: string): Promise<unknown>;
}

interface TokenSpec {
  expiresAt: string;
}

/**
 * Tokens of private previews (reference §1.6 `PreviewToken`): resources of kind `preview-token`
 * whose parent is `<sandbox>/<preview>`; the value is returned once and stored only hashed.
 */
export class PreviewTokens {
  readonly col: ResourceCollection<TokenSpec>;

  constructor(
    private readonly deps: CollectionDeps,
    private readonly previews: PreviewLookup,
  ) {
    this.col = new ResourceCollection<TokenSpec>(deps, PREVIEW_TOKEN_KIND, 'Preview token');
  }

  view(row: ResourceRow<TokenSpec>, token?: string): PreviewToken {
    const [resourceName = '', previewName = ''] = row.parent.split('/');
    return {
      metadata: {
        name: row.name,
        previewName,
        resourceName,
        resourceType: 'sandbox',
        workspace: row.workspace,
      },
      spec: {
        expiresAt: row.spec.expiresAt,
        expired: Date.parse(row.spec.expiresAt) <= this.deps.now().getTime(),
        ...(token !== undefined ? { token } : {}),
      },
    };
  }

  async list(ws: WorkspaceAccess, sandboxName: string, previewName: string, page: PageRequest) {
    await this.previews.get(ws, sandboxName, previewName);
    const parent = `${sandboxName}/${previewName}`;
    return mapPage(await this.col.list(ws.name, page, { parent }), (r) => this.view(r));
  }

  async create(
    ws: WorkspaceAccess,
    actor: string,
    sandboxName: string,
    previewName: string,
    body: PreviewTokenInput,
  ) {
    await this.previews.get(ws, sandboxName, previewName);
    const now = this.deps.now();
    const expiresAt = new Date(body.spec.expiresAt);
    if (expiresAt.getTime() <= now.getTime()) throw invalidField('spec.expiresAt', 'must be in the future');
    const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
    const row = await this.col.create({
      workspace: ws.name,
      parent: `${sandboxName}/${previewName}`,
      name: body.metadata?.name ?? `token-${randomBytes(4).toString('hex')}`,
      actor,
      displayName: null,
      externalId: null,
      labels: {},
      spec: { expiresAt: expiresAt.toISOString() },
      status: 'DEPLOYED',
      system: { tokenHash: hashSecret(token) },
      event: newEvent(undefined, 'token', 'DEPLOYED', 'Preview token created', now),
    });
    return this.view(row, token);
  }

  async delete(ws: WorkspaceAccess, sandboxName: string, previewName: string, name: string) {
    await this.previews.get(ws, sandboxName, previewName);
    const row = await this.col.get(ws.name, name, `${sandboxName}/${previewName}`);
    await this.col.remove(row);
    return { message: `Preview token "${name}" deleted` };
  }

  /** Whether `token` opens the preview now (for the preview gateway). */
  async verify(workspace: string, sandboxName: string, previewName: string, token: string): Promise<boolean> {
    if (!token.startsWith(TOKEN_PREFIX)) return false;
    const now = this.deps.now().getTime();
    for (const row of await this.all(workspace, `${sandboxName}/${previewName}`)) {
      const hash = row.system.tokenHash;
      if (typeof hash === 'string' && Date.parse(row.spec.expiresAt) > now && secretMatches(token, hash))
        return true;
    }
    return false;
  }

  async removeAll(workspace: string, sandboxName: string, previewName: string): Promise<void> {
    for (const row of await this.all(workspace, `${sandboxName}/${previewName}`)) await this.col.remove(row);
  }

  private async all(workspace: string, parent: string): Promise<ResourceRow<TokenSpec>[]> {
    const rows: ResourceRow<TokenSpec>[] = [];
    let after: { key: string; id: string } | undefined;
    for (;;) {
      const page = await this.deps.store.resources.list<TokenSpec>(
        workspace,
        PREVIEW_TOKEN_KIND,
        { sort: 'createdAt:asc', limit: 200, ...(after ? { after } : {}) },
        { parent },
      );
      rows.push(...page.items);
      if (!page.hasMore || !page.last) return rows;
      after = page.last;
    }
  }
}
