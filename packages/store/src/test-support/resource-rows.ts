// A resource row for tests to insert (store.resources.create): every column filled, so a test
// names only what it is about, and a new column is added here once rather than in every test.
import { randomBytes } from 'node:crypto';
import type { NewResource } from '../repositories/resources.js';

/** A DEPLOYING sandbox `name` in `workspace`, created now by `t`, with an id of its own. */
export function newResource<Spec = unknown>(
  over: Partial<NewResource<Spec>> & Pick<NewResource<Spec>, 'workspace' | 'name'>,
): NewResource<Spec> {
  const now = new Date().toISOString();
  return {
    id: `${over.name}-${randomBytes(4).toString('hex')}`,
    kind: 'sandbox',
    parent: '',
    displayName: null,
    externalId: null,
    labels: {},
    spec: {} as Spec,
    status: 'DEPLOYING',
    state: null,
    system: {},
    events: [],
    createdAt: now,
    updatedAt: now,
    createdBy: 't',
    updatedBy: 't',
    terminatedAt: null,
    ...over,
  };
}
