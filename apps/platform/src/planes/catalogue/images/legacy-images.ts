import { BASE_IMAGE, normalizeRef } from '@tarmac/engine';
import type { Store } from '@tarmac/store';
import type { Logger } from 'pino';
import { DEFAULT_WORKSPACE } from '../../../framework/default-workspace.js';
import { NAMESPACE_PREFIX, namespacedRef } from './workspace-images.js';

/** The part of the engine's image store the migration needs. */
export interface LegacyImageStore {
  refs(): string[];
  adopt(from: string, to: string, mode: 'move' | 'copy'): Promise<void>;
}

/**
 * Images imported before workspace namespaces (workspace-images.ts) were stored under their bare
 * ref and belonged to nobody. On start they are given to the workspaces that use them — every
 * workspace with a sandbox whose `spec.runtime.image` names the ref (the first gets the image
 * moved, the others a hard-linked copy) — or, used by none, to the `default` workspace; so no
 * user's image is lost and none stays readable by everyone. Run only when this platform owns the
 * image store (not a TARMAC_IMAGE_DIR shared by several homes, where no one platform can say whose
 * an image is: those stay where they are, unreachable, until an operator re-imports them).
 */
export async function namespaceLegacyImages(
  images: LegacyImageStore,
  store: Pick<Store, 'workspaces' | 'resources'>,
  logger: Logger,
): Promise<void> {
  const legacy = images.refs().filter((r) => !r.startsWith(NAMESPACE_PREFIX) && r !== BASE_IMAGE);
  if (legacy.length === 0) return;
  const sandboxes = await store.resources.listByKind<{ runtime?: { image?: string } }>('sandbox');
  for (const ref of legacy) {
    const users = new Set<string>();
    for (const s of sandboxes) {
      const image = s.spec.runtime?.image;
      if (image !== undefined && sameRef(image, ref)) users.add(s.workspace);
    }
    if (users.size === 0) users.add(DEFAULT_WORKSPACE);
    const owners: string[] = [];
    for (const name of users) {
      const w = await store.workspaces.get(name);
      if (w) owners.push(w.id);
    }
    if (owners.length === 0) {
      logger.warn({ image: ref }, 'image from before workspace namespaces has no workspace to go to; left');
      continue;
    }
    // Copies first, the move last: the source must exist for every copy.
    for (const [i, id] of owners.entries()) {
      await images.adopt(ref, namespacedRef(id, ref), i === owners.length - 1 ? 'move' : 'copy');
    }
    logger.info({ image: ref, workspaces: [...users] }, 'image moved into its workspace namespace');
  }
}

function sameRef(a: string, b: string): boolean {
  try {
    return normalizeRef(a) === normalizeRef(b);
  } catch {
    return false;
  }
}
