import type { Kysely, Migration, MigrationProvider } from 'kysely';
import * as identity from './001-identity.js';
import * as resources from './002-resources.js';
import * as resourceCounts from './003-resource-counts.js';
import * as resourcesByStatus from './004-resources-by-status.js';
import * as metering from './010-metering.js';
import * as modelCalls from './020-model-calls.js';

/**
 * Every migration, in order. Static imports (no directory scan) so the bundle and both dialects see
 * the same list; a new migration is a new file and one line here. Never edit a released one.
 */
const MIGRATIONS: Record<string, Migration> = {
  '001-identity': identity,
  '002-resources': resources,
  '003-resource-counts': resourceCounts,
  '004-resources-by-status': resourcesByStatus,
  '010-metering': metering,
  '020-model-calls': modelCalls,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve(MIGRATIONS),
};

export type AnyDb = Kysely<unknown>;
