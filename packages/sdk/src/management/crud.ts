import type { RouteBodyInput, RouteQueryInput, RouteResponse, RouteSpec } from '@tarmac/contract';
import type { TarmacClient } from '../client.js';
import type { PageIterator } from '../http/pages.js';
import { fillPath, type QueryValue } from '../http/route-url.js';

type Query = Record<string, QueryValue>;

/** The five CRUD-std routes of a catalogue kind, as `crudRoutes()` in the contract makes them. */
export interface CrudTable {
  list: RouteSpec & { paginated: true };
  create: RouteSpec;
  get: RouteSpec;
  update: RouteSpec;
  delete: RouteSpec;
}

/** The name parameter of `/v0/agents/{agentName}`: the last `{...}` of the item path. */
function nameParam(route: RouteSpec): string {
  const match = /\{(\w+)\}$/.exec(route.path);
  if (!match?.[1]) throw new TypeError(`${route.path} has no name parameter`);
  return match[1];
}

/**
 * A thin wrapper over any CRUD route table of the contract: `list` (lazy pages), `get`,
 * `create`, `update` (PUT of the whole `{metadata, spec}`), `delete`. New kinds in the contract
 * need one line in `Tarmac`, nothing more.
 */
export class CrudApi<T extends CrudTable> {
  private readonly param: string;
  constructor(
    private readonly client: TarmacClient,
    readonly routes: T,
  ) {
    this.param = nameParam(routes.get);
  }

  list(query: Partial<RouteQueryInput<T['list']>> = {}): PageIterator<RouteResponse<T['list']>> {
    return this.client.paginatePath(this.routes.list.path, query as Query);
  }
  get(name: string, query: Partial<RouteQueryInput<T['get']>> = {}): Promise<RouteResponse<T['get']>> {
    return this.client.call('GET', this.item(this.routes.get, name), { query: query as Query });
  }
  create(body: RouteBodyInput<T['create']>): Promise<RouteResponse<T['create']>> {
    return this.client.call('POST', this.routes.create.path, { json: body });
  }
  update(name: string, body: RouteBodyInput<T['update']>): Promise<RouteResponse<T['update']>> {
    return this.client.call('PUT', this.item(this.routes.update, name), { json: body });
  }
  delete(name: string): Promise<RouteResponse<T['delete']>> {
    return this.client.call('DELETE', this.item(this.routes.delete, name));
  }
  private item(route: RouteSpec, name: string): string {
    return fillPath(route.path, { [this.param]: name });
  }
}
