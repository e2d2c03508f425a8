import { BASE_IMAGE, normalizeRef, resolveRef } from '@tarmac/engine';
import type { Store } from '@tarmac/store';
import { invalidField, notFound } from '@tarmac/server-kit';
import { IMAGE_KIND, imageKey, systemOf, type StoredImageSpec } from './image-rows.js';

/**
 * Images belong to a workspace (issue 19 item 2: an admin of another workspace overwrote
 * `default`'s `acme/tool:1`, refs being one global namespace in the engine's store). The engine
 * stays workspace-agnostic; the platform stores workspace W's `acme/tool:1` under the engine ref
 * `ws-<W's id>/acme/tool:1` (the id, not the name: a workspace deleted and re-created under the
 * same name gets none of the old one's images). A workspace writes only its own namespace, so a
 * collision across workspaces cannot happen.
 *
 * What `spec.runtime.image` names in W, first match wins:
 *  1. a built-in image (`tarmac/base:latest` and its aliases): global, readable by all;
 *  2. an image record of W, `{resourceType}/{name}:{tag}` (reference §1.9): W's own, or one shared
 *     into W (a same-account share, or a cross-account share W accepted — the share flow writes
 *     that copy). Its tag's source ref is resolved in the workspace that owns the image;
 *  3. W's own import of that ref.
 * Nothing else: another workspace's images are out of reach unless shared.
 */
export const NAMESPACE_PREFIX = 'ws-';

const RESOURCE_TYPES: Record<string, string> = {
  agents: 'agents',
  agent: 'agents',
  functions: 'functions',
  function: 'functions',
  sandboxes: 'sandboxes',
  sandbox: 'sandboxes',
  jobs: 'jobs',
  job: 'jobs',
};

/** The engine ref of workspace `workspaceId`'s image `ref`. Throws on a ref the engine would refuse. */
export function namespacedRef(workspaceId: string, ref: string): string {
  if (!/^[a-z0-9][a-z0-9-]{0,63}$/.test(workspaceId)) {
    throw new Error(`workspace id ${JSON.stringify(workspaceId)} cannot name an image namespace`);
  }
  return `${NAMESPACE_PREFIX}${workspaceId}/${normalizeRef(ref)}`;
}

/** The ref as the workspace knows it (`ws-<id>/` dropped). */
export function workspaceRef(engineRef: string): string {
  if (!engineRef.startsWith(NAMESPACE_PREFIX)) return engineRef;
  return engineRef.slice(engineRef.indexOf('/') + 1);
}

export function isBuiltIn(ref: string): boolean {
  try {
    return resolveRef(ref) === BASE_IMAGE;
  } catch {
    return false;
  }
}

export class WorkspaceImages {
  constructor(private readonly store: Pick<Store, 'workspaces' | 'resources'>) {}

  /** Where an import of `ref` into `workspace` is stored. Built-in names are not the workspace's to replace. */
  async importTarget(workspace: string, ref: string): Promise<string> {
    if (isBuiltIn(ref)) {
      throw invalidField('query.ref', `"${ref}" names the built-in base image; import under another name`);
    }
    try {
      return namespacedRef(await this.idOf(workspace), ref);
    } catch (err) {
      if (err instanceof Error && err.message.startsWith('invalid image reference')) {
        throw invalidField('query.ref', 'must be an image reference such as myorg/tool:1.0');
      }
      throw err;
    }
  }

  /** The engine ref `ref` names in `workspace`, or undefined when it names nothing it may use. */
  async resolve(workspace: string, ref: string): Promise<string | undefined> {
    let normalized: string;
    try {
      normalized = normalizeRef(ref);
    } catch {
      return undefined;
    }
    if (isBuiltIn(normalized)) return resolveRef(normalized);
    const viaRecord = await this.viaRecord(workspace, normalized);
    if (viaRecord !== null) return viaRecord;
    const id = await this.idOf(workspace).catch(() => undefined);
    return id === undefined ? undefined : namespacedRef(id, normalized);
  }

  /** An image record's tag (step 2), resolved in its owner's namespace; null when there is none. */
  private async viaRecord(workspace: string, ref: string): Promise<string | undefined | null> {
    const colon = ref.lastIndexOf(':');
    const repo = ref.slice(0, colon);
    const slash = repo.indexOf('/');
    const resourceType = RESOURCE_TYPES[repo.slice(0, slash)];
    if (slash < 0 || !resourceType) return null;
    const row = await this.store.resources.get<StoredImageSpec>(
      workspace,
      IMAGE_KIND,
      imageKey(resourceType, repo.slice(slash + 1)),
    );
    const tag =
      row && !row.terminatedAt ? row.spec.tags.find((t) => t.name === ref.slice(colon + 1)) : undefined;
    if (!row || !tag) return null;
    if (isBuiltIn(tag.source)) return resolveRef(tag.source);
    const owner = systemOf(row).sourceWorkspace ?? workspace;
    try {
      return namespacedRef(await this.idOf(owner), tag.source);
    } catch {
      return undefined; // the owner is gone, or the source is no usable ref
    }
  }

  private async idOf(workspace: string): Promise<string> {
    const w = await this.store.workspaces.get(workspace);
    if (!w) throw notFound(`Workspace "${workspace}"`);
    return w.id;
  }
}
