import type { Image } from '@tarmac/contract';
import type { ResourceRow } from '@tarmac/store';
import { eventsOf } from '../../../framework/envelope.js';
export { IMAGE_KIND, PENDING_SHARE_KIND } from '../../../framework/kinds.js';

/**
 * How an image is stored: one `image` row per repository, named `{resourceType}/{imageName}` (so
 * one keyset listing covers every resource type). `spec.tags[].source` keeps the prebuilt ref each tag points at;
 * `system` holds who shared it here (`sourceWorkspace`) and where it is shared to (`shares`).
 */

export interface StoredTag {
  name: string;
  size: number;
  createdAt: string;
  updatedAt: string;
  /** The image reference this tag resolves to (e.g. `ghcr.io/acme/agent:1.2`). */
  source: string;
}
export interface StoredImageSpec {
  tags: StoredTag[];
}
export interface ShareEntry {
  targetWorkspace: string;
  createdAt: string;
  createdBy: string;
}
export interface ImageSystem {
  sourceWorkspace?: string;
  lastDeployedAt?: string;
  shares?: ShareEntry[];
}

export type ImageRow = ResourceRow<StoredImageSpec>;

export const imageKey = (resourceType: string, name: string) => `${resourceType}/${name}`;
export function splitKey(key: string): { resourceType: string; name: string } {
  const slash = key.indexOf('/');
  return { resourceType: key.slice(0, slash), name: key.slice(slash + 1) };
}

export const systemOf = (row: ImageRow): ImageSystem => row.system as ImageSystem;

export function imageView(row: ImageRow): Image {
  const system = systemOf(row);
  const tags = row.spec.tags.map(({ name, size, createdAt, updatedAt }) => ({
    name,
    size,
    createdAt,
    updatedAt,
  }));
  const { resourceType, name } = splitKey(row.name);
  return {
    metadata: {
      name,
      displayName: row.displayName ?? name,
      resourceType,
      workspace: row.workspace,
      sourceWorkspace: system.sourceWorkspace ?? row.workspace,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
      lastDeployedAt: system.lastDeployedAt ?? '',
      status: row.status ?? 'BUILT',
      events: eventsOf(row),
    },
    spec: { size: tags.reduce((sum, t) => sum + t.size, 0), tags },
  };
}

/** `ref` → tag name: the part after the last `:` that is not inside a registry host (default `latest`). */
export function tagOf(ref: string): string {
  const slash = ref.lastIndexOf('/');
  const colon = ref.lastIndexOf(':');
  const at = ref.indexOf('@');
  if (at >= 0)
    return `sha256-${ref
      .slice(at + 1)
      .replace(/^sha256:/, '')
      .slice(0, 12)}`;
  return colon > slash ? ref.slice(colon + 1) : 'latest';
}
