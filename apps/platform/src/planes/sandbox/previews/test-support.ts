// Rows the preview gateway's tests put straight into a real store (what the previews module
// writes: modules/previews/previews.service.ts and preview-tokens.ts).
import type { PreviewSpec } from '@tarmac/contract';
import type { Store } from '@tarmac/store';
import { randomUUID } from 'node:crypto';
import { hashSecret } from '../../../framework/credentials.js';
import { PREVIEW_TOKEN_KIND } from './preview-tokens.js';
import { CUSTOM_DOMAIN_KIND } from '../../catalogue/custom-domains/custom-domains.service.js';
import { PREVIEW_KIND } from './previews.service.js';

function row(workspace: string, kind: string, parent: string, name: string, spec: unknown, system: object) {
  const now = new Date().toISOString();
  return {
    id: randomUUID(),
    workspace,
    kind,
    parent,
    name,
    displayName: null,
    externalId: null,
    labels: {},
    spec,
    status: 'DEPLOYED',
    state: null,
    system: { ...system },
    events: [],
    createdAt: now,
    updatedAt: now,
    createdBy: 'test',
    updatedBy: 'test',
    terminatedAt: null,
  };
}

export async function putPreview(
  store: Store,
  workspace: string,
  sandbox: string,
  name: string,
  spec: PreviewSpec,
  previewId = name,
): Promise<string> {
  const r = row(workspace, PREVIEW_KIND, sandbox, name, spec, { previewId, region: 'local' });
  await store.resources.create(r);
  return r.id;
}

/** A preview token row (stored hashed); returns the row id. */
export async function putToken(
  store: Store,
  workspace: string,
  sandbox: string,
  preview: string,
  token: string,
  expiresAt: Date,
): Promise<string> {
  const r = row(
    workspace,
    PREVIEW_TOKEN_KIND,
    `${sandbox}/${preview}`,
    `t-${randomUUID().slice(0, 8)}`,
    {
      expiresAt: expiresAt.toISOString(),
    },
    { tokenHash: hashSecret(token) },
  );
  await store.resources.create(r);
  return r.id;
}

/** A custom-domain row (the name is the domain). */
export async function putCustomDomain(store: Store, workspace: string, domain: string): Promise<void> {
  await store.resources.create(row(workspace, CUSTOM_DOMAIN_KIND, '', domain, {}, {}));
}
