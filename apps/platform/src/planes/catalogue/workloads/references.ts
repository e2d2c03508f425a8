import type { PageRequest } from '@tarmac/server-kit';
import { ApiError } from '@tarmac/server-kit';
import type { ResourceRow, Store } from '@tarmac/store';
export { CONNECTION_KIND, POLICY_KIND } from '../../../framework/kinds.js';

/**
 * Names a workload spec refers to — integration connections and policies — must exist in the
 * workspace (issue 3: "POST /v0/functions referencing a connection that does not exist is a 400
 * naming it"), and a referenced one cannot be deleted (reference §1.11 "DELETE can return 409").
 */

const PAGE: PageRequest = { sort: 'createdAt:asc', limit: 200 };

/** Every live row of a kind in a workspace (reference checks; workspaces hold few of these). */
export async function allRows<Spec>(
  store: Store,
  workspace: string,
  kind: string,
): Promise<ResourceRow<Spec>[]> {
  const rows: ResourceRow<Spec>[] = [];
  let page: PageRequest = PAGE;
  for (;;) {
    const result = await store.resources.list<Spec>(workspace, kind, page);
    rows.push(...result.items);
    if (!result.hasMore || !result.last) return rows;
    page = { ...PAGE, after: result.last };
  }
}

/** A 400 naming every missing reference, e.g. `body.spec.integrationConnections.0`. */
export async function assertReferencesExist(
  store: Store,
  workspace: string,
  kind: string,
  field: string,
  names: readonly string[],
  noun: string,
  check?: (row: ResourceRow) => string | undefined,
): Promise<void> {
  const details: { field: string; message: string }[] = [];
  for (const [index, name] of names.entries()) {
    const row = await store.resources.get(workspace, kind, name);
    const problem =
      !row || row.terminatedAt
        ? `${noun} "${name}" does not exist in workspace "${workspace}"`
        : check?.(row);
    if (problem) details.push({ field: `body.${field}.${index}`, message: problem });
  }
  if (details.length > 0) {
    throw new ApiError(
      'validation_error',
      `Invalid request: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}`,
      {
        details,
      },
    );
  }
}

/** Names of the rows of `kind` whose spec lists `name` under `field`. */
export async function referrers(
  store: Store,
  workspace: string,
  kind: string,
  field: 'integrationConnections' | 'policies',
  name: string,
): Promise<string[]> {
  const rows = await allRows<Record<string, unknown>>(store, workspace, kind);
  return rows
    .filter((row) => {
      const list = row.spec[field];
      return Array.isArray(list) && list.includes(name);
    })
    .map((row) => row.name);
}
