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

/** Associated data of a sealed token value: it opens only on its own record. */
const sealContext = (workspace: string, parent: string, name: string) =>
  `${workspace}/preview-token/${parent}/${name}`;

/** What tokens need of the previews service: that the preview exists (handed in; no import back). */
export interface PreviewLookup {
  get(ws: WorkspaceAccess, sandboxName: string, previewName: string): Promise<unknown>;
}

interface TokenSpec {
  expiresAt: string;
}

/**
 * Tokens of private previews (reference §1.6 `PreviewToken`): resources of kind `preview-token`
 * whose parent is `<sandbox>/<preview>`. `spec.token` is a read-only response field of the
 * reference's PreviewToken, and the vendor SDK's sessions.get / fromSession read it from the list
 * (issue 14 item 4): the value is kept sealed at rest (SecretBox, bound to the token's own
 * workspace/sandbox/preview/name) for showing to members of the workspace, and hashed for checking.
 */
export class PreviewTokens {
  readonly col: ResourceCollection<TokenSpec>;

  constructor(
    private readonly deps: CollectionDeps,
    private readonly previews: PreviewLookup,
  ) {
    this.col = new ResourceCollection<TokenSpec>(deps, PREVIEW_TOKEN_KIND, 'Preview token');
  }

  view(row: ResourceRow<TokenSpec>, token = this.reveal(row)): PreviewToken {
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
    const name = body.metadata?.name ?? `token-${randomBytes(4).toString('hex')}`;
    const row = await this.col.create({
      workspace: ws.name,
      parent: `${sandboxName}/${previewName}`,
      name,
      actor,
      displayName: null,
      externalId: null,
      labels: {},
      spec: { expiresAt: expiresAt.toISOString() },
      status: 'DEPLOYED',
      system: {
        tokenHash: hashSecret(token),
        tokenSealed: this.deps.secrets.seal(
          token,
          sealContext(ws.name, `${sandboxName}/${previewName}`, name),
        ),
      },
      event: newEvent(undefined, 'token', 'DEPLOYED', 'Preview token created', now),
    });
    return this.view(row, token);
  }

  /** The token's value, opened from its sealed copy; undefined for tokens made before it was kept. */
  private reveal(row: ResourceRow<TokenSpec>): string | undefined {
    const sealed = row.system.tokenSealed;
    if (typeof sealed !== 'string') return undefined;
    try {
      return this.deps.secrets.open(sealed, sealContext(row.workspace, row.parent, row.name));
    } catch {
      return undefined; // sealed under another key or context: never shown
    }
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
