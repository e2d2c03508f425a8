export { openStore, type Dialect, type Store, type StoreOptions } from './store.js';
export { repositories, type Repositories } from './repositories.js';
export { UniqueViolationError, StaleRevisionError, isUniqueViolation } from './errors.js';
export type { ListPage, Page, PagePosition, SortOrder } from './page.js';
export type {
  AccountRow,
  ApiKeyRow,
  ApiKeyWithOwner,
  InvitationRow,
  MembershipRow,
  PrincipalKind,
  PrincipalRow,
  RefreshTokenRow,
  Role,
  WorkspaceRow,
} from './repositories/identity-rows.js';
export type { WorkspaceAccessRow } from './repositories/workspace-access.js';
export {
  MAX_EVENTS,
  type NewResource,
  type ResourceEvent,
  type ResourceFilter,
  type ResourcePatch,
  type ResourceRow,
} from './repositories/resources.js';
export type { Database } from './schema.js';
export type {
  MeteringRepository,
  UsageFilters,
  UsageQuery,
  UsageRow,
  UsageSample,
  UsageSegment,
} from './repositories/metering.js';
export {
  periodOf,
  USAGE_KEY_COLUMNS,
  type RollupGrain,
  type UsageKeyColumn,
} from './repositories/metering-tables.js';
export type { ModelCallQuery, ModelCallRow, ModelCallsRepository } from './repositories/model-calls.js';
