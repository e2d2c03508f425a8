import type { CoreEvent, Metadata, MetadataInput } from '@tarmac/contract';
import { invalidField } from '@tarmac/server-kit';
import type { ResourceRow } from '@tarmac/store';

/**
 * Response metadata of the common envelope (spec "Common envelope"): the caller's fields plus the
 * system ones. `url` comes from the kind (e.g. the sandbox host URL), `plan` is the installation's.
 */
export const PLAN = 'self-hosted';

export function envelopeMetadata(row: ResourceRow, url: string): Metadata {
  return {
    name: row.name,
    displayName: row.displayName ?? row.name,
    ...(row.externalId !== null ? { externalId: row.externalId } : {}),
    labels: row.labels,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    createdBy: row.createdBy,
    updatedBy: row.updatedBy,
    plan: PLAN,
    url,
    workspace: row.workspace,
  };
}

/** Events as they leave the server: a copy, never the row's own array. */
export const eventsOf = (row: ResourceRow): CoreEvent[] => row.events.map((e) => ({ ...e }));

/** Names are immutable (reference §0 Metadata): a PUT whose `metadata.name` differs is a 400. */
export function assertSameName(pathName: string, bodyName: string | undefined): void {
  if (bodyName !== undefined && bodyName !== pathName) {
    throw invalidField(
      'metadata.name',
      `is immutable: the resource is "${pathName}", the body says "${bodyName}"`,
    );
  }
}

/** The metadata columns a create or update writes; absent optional fields keep (update) or clear (create). */
export function metadataColumns(
  input: Pick<MetadataInput, 'displayName' | 'externalId' | 'labels'>,
  before?: ResourceRow,
) {
  return {
    displayName: input.displayName ?? before?.displayName ?? null,
    externalId: input.externalId ?? before?.externalId ?? null,
    labels: input.labels ?? before?.labels ?? {},
  };
}
