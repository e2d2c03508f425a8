import { PAGINATION_SINCE, type RouteResponse, type RouteSpec } from '@tarmac/contract';
import type { ConnectionSettings } from './config.js';
import { ClientCredentialsToken, StaticToken, type TokenSource } from './http/auth.js';
import { TarmacConfigError } from './http/errors.js';
import { PageIterator, toPage, type Page } from './http/pages.js';
import type { RetryPolicy } from './http/retry.js';
import { routeUrl, type QueryValue } from './http/route-url.js';
import type { OptionalInput, PaginatedRoute, RouteInput } from './http/route-types.js';
import { HttpTransport, type FetchLike, type SendOptions } from './http/transport.js';
import type { WebSocketFactory } from './sandbox/websocket.js';

export interface ClientOptions {
  apiUrl: string;
  /** Base of path-style sandbox URLs (`{runUrl}/{ws}/sandboxes/{name}`); defaults to apiUrl. */
  runUrl?: string | undefined;
  workspace?: string | undefined;
  accountId?: string | undefined;
  apiKey?: string | undefined;
  clientId?: string | undefined;
  clientSecret?: string | undefined;
  /** Defaults to the global fetch; `@tarmac/sdk/node` passes one that resolves `*.localhost`. */
  fetch?: FetchLike | undefined;
  /** Opens terminal websockets; defaults to the global WebSocket (browsers, Node 22+). */
  webSocket?: WebSocketFactory | undefined;
  /** `Service-Version`; pinned so list shapes never change under you. */
  apiVersion?: string | undefined;
  retry?: RetryPolicy | undefined;
  /**
   * Forces the API base of a sandbox (reference §2.1 `BL_SANDBOX_<NAME>_URL`): for sandboxes
   * reached through a tunnel or run by hand. `@tarmac/sdk/node` reads `TARMAC_SANDBOX_<NAME>_URL`.
   */
  sandboxUrl?: ((name: string) => string | undefined) | undefined;
  /** Extra headers on every management request. */
  headers?: Record<string, string> | undefined;
}

/** The SDK pins the first version with `{data, meta}` lists. */
export const SDK_API_VERSION = PAGINATION_SINCE;

/**
 * The typed core: `request(route, input)` calls any route of a contract route table, `paginate`
 * walks a paginated one. Resource wrappers (`client.workspaces`, `Sandbox`...) sit on top.
 */
export class TarmacClient {
  readonly apiUrl: string;
  readonly runUrl: string;
  readonly workspace: string | undefined;
  readonly accountId: string | undefined;
  readonly fetch: FetchLike;
  readonly webSocket: WebSocketFactory | undefined;
  readonly transport: HttpTransport;
  private readonly tokens: TokenSource;

  constructor(readonly options: ClientOptions) {
    if (!options.apiUrl) throw new TarmacConfigError('apiUrl is required');
    this.apiUrl = options.apiUrl.replace(/\/+$/, '');
    this.runUrl = (options.runUrl ?? this.apiUrl).replace(/\/+$/, '');
    this.workspace = options.workspace;
    this.accountId = options.accountId;
    const globalFetch = globalThis.fetch as FetchLike | undefined;
    const fetch = options.fetch ?? (globalFetch ? (input, init) => globalFetch(input, init) : undefined);
    if (!fetch) throw new TarmacConfigError('no fetch available: pass options.fetch');
    this.fetch = fetch;
    this.webSocket = options.webSocket;
    if (options.clientId && options.clientSecret && !options.apiKey) {
      this.tokens = new ClientCredentialsToken(this.apiUrl, options.clientId, options.clientSecret, fetch);
    } else {
      this.tokens = new StaticToken(options.apiKey);
    }
    this.transport = new HttpTransport({ fetch, headers: () => this.headers(), retry: options.retry });
  }

  static fromSettings(settings: ConnectionSettings, extra: Partial<ClientOptions> = {}): TarmacClient {
    return new TarmacClient({ ...settings, ...extra });
  }

  /** The same client acting in another workspace. */
  withWorkspace(workspace: string): TarmacClient {
    return new TarmacClient({ ...this.options, workspace });
  }

  /** Current bearer token (API key or a fresh client-credentials JWT). */
  token(): Promise<string | undefined> {
    return this.tokens.token();
  }

  /** Headers for every request to the platform and to sandboxes. */
  async headers(): Promise<Record<string, string>> {
    const headers: Record<string, string> = {
      'service-version': this.options.apiVersion ?? SDK_API_VERSION,
      ...this.options.headers,
    };
    const token = await this.tokens.token();
    if (token) headers.authorization = `Bearer ${token}`;
    if (this.workspace) headers['x-service-workspace'] = this.workspace;
    return headers;
  }

  /** Calls one route of a contract route table and returns its parsed body. */
  request<R extends RouteSpec>(route: R, ...input: OptionalArg<R>): Promise<RouteResponse<R>> {
    const args = (input[0] ?? {}) as RouteInput<R>;
    return this.transport.json<RouteResponse<R>>({
      method: route.method,
      url: routeUrl(this.apiUrl, route, args.params as Record<string, unknown>, args.query as Query),
      json: args.body,
      headers: args.headers,
      signal: args.signal,
    });
  }

  /** One page of a paginated route. */
  async page<R extends PaginatedRoute>(route: R, ...input: OptionalArg<R>): Promise<Page<RouteResponse<R>>> {
    const args = (input[0] ?? {}) as RouteInput<R>;
    const body = await this.transport.json<unknown>({
      method: route.method,
      url: routeUrl(this.apiUrl, route, args.params as Record<string, unknown>, args.query as Query),
      headers: args.headers,
      signal: args.signal,
    });
    return toPage<RouteResponse<R>>(body);
  }

  /** Every item of a paginated route, fetched page by page as you iterate. */
  paginate<R extends PaginatedRoute>(route: R, ...input: OptionalArg<R>): PageIterator<RouteResponse<R>> {
    const args = (input[0] ?? {}) as RouteInput<R>;
    return new PageIterator((cursor) =>
      this.page(route, {
        ...args,
        query: { ...(args.query as Query), ...(cursor ? { cursor } : {}) },
      } as RouteInput<R> as never),
    );
  }

  /** A request to a path not (yet) in a contract route table; same headers, retries and errors. */
  call<T>(
    method: string,
    path: string,
    options: { query?: Query; json?: unknown } & Omit<SendOptions, 'method' | 'url' | 'json'> = {},
  ): Promise<T> {
    const { query, ...rest } = options;
    return this.transport.json<T>({ ...rest, method, url: routeUrl(this.apiUrl, { path }, {}, query) });
  }

  /** Paginates a list path not (yet) in a contract route table. */
  paginatePath<T>(path: string, query: Query = {}): PageIterator<T> {
    return new PageIterator(async (cursor) =>
      toPage<T>(
        await this.call<unknown>('GET', path, { query: { ...query, ...(cursor ? { cursor } : {}) } }),
      ),
    );
  }
}

type Query = Record<string, QueryValue>;
/** Makes the input argument optional when nothing in it is required. */
type OptionalArg<R extends RouteSpec> = [OptionalInput<R>] extends [never]
  ? [RouteInput<R>]
  : [RouteInput<R>?];
