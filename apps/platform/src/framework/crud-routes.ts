import type { RouteSpec } from '@tarmac/contract';
import {
  mountRoute,
  principalOf,
  workspaceOf,
  type PageRequest,
  type RouteDeps,
  type ServerEnv,
  type WorkspaceAccess,
} from '@tarmac/server-kit';
import type { Hono } from 'hono';
import type { ResourceFilter } from '@tarmac/store';
import { listFilter } from './collection.js';

/** The six routes every workload kind has (spec "Agent", "Function", "Model", "Job"). */
export interface CrudRouteSpecs {
  list: RouteSpec;
  create: RouteSpec;
  get: RouteSpec;
  update: RouteSpec;
  delete: RouteSpec;
  revisions: RouteSpec;
}

/**
 * What the registrar calls. The workspace is passed the one way services take it: the
 * `WorkspaceAccess` the pipeline resolved (name, account, the caller's role), never a bare name.
 */
export interface CrudService<Input> {
  list(ws: WorkspaceAccess, page: PageRequest, filter: ResourceFilter): Promise<unknown>;
  create(ws: WorkspaceAccess, actor: string, input: Input): Promise<unknown>;
  get(ws: WorkspaceAccess, name: string, showSecrets: boolean): Promise<unknown>;
  update(ws: WorkspaceAccess, actor: string, name: string, input: Input, upsert?: boolean): Promise<unknown>;
  delete(ws: WorkspaceAccess, name: string): Promise<unknown>;
  revisions(ws: WorkspaceAccess, name: string): Promise<unknown>;
}

export interface CrudOptions {
  /** The path parameter naming the record (`agentName`, `jobId`, …). */
  nameParam: string;
  /** Whether GET takes `show_secrets` (models have no secrets to show). */
  showSecrets: boolean;
  /** Whether PUT creates a missing record (models: reference §1.3). */
  upsert: boolean;
}

/**
 * One registrar for the same-shaped CRUD routes (issue 13: agents, functions and models were the
 * same 22 lines). The contract's schemas still parse every request and check every response
 * (mountRoute); only the wiring is shared.
 */
export function registerCrudRoutes<Input>(
  app: Hono<ServerEnv>,
  deps: RouteDeps,
  routes: CrudRouteSpecs,
  service: CrudService<Input>,
  options: CrudOptions,
): void {
  type Args = {
    ctx: Parameters<typeof workspaceOf>[0];
    params: Record<string, string>;
    query: { show_secrets?: boolean } & Parameters<typeof listFilter>[0];
    body: Input;
    page: PageRequest;
  };
  const mount = (route: RouteSpec, handler: (args: Args) => Promise<unknown>) =>
    mountRoute(app, deps, route, handler as never);
  const name = (params: Record<string, string>) => params[options.nameParam] ?? '';
  mount(routes.list, async ({ ctx, page, query }) => service.list(workspaceOf(ctx), page, listFilter(query)));
  mount(routes.create, async ({ ctx, body }) => service.create(workspaceOf(ctx), principalOf(ctx).id, body));
  mount(routes.get, async ({ ctx, params, query }) =>
    service.get(workspaceOf(ctx), name(params), options.showSecrets ? (query.show_secrets ?? false) : false),
  );
  mount(routes.update, async ({ ctx, params, body }) =>
    service.update(workspaceOf(ctx), principalOf(ctx).id, name(params), body, options.upsert),
  );
  mount(routes.delete, async ({ ctx, params }) => service.delete(workspaceOf(ctx), name(params)));
  mount(routes.revisions, async ({ ctx, params }) => service.revisions(workspaceOf(ctx), name(params)));
}
