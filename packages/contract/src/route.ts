import type { z } from 'zod';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * Who may call a route:
 * - `public`: anyone (health, JWKS, token endpoint);
 * - `principal`: any authenticated caller, no workspace needed;
 * - `workspace`: an authenticated member of the resolved workspace (`workspace` query parameter,
 *   `X-Service-Workspace` header, or the caller's only workspace).
 */
export type AuthMode = 'public' | 'principal' | 'workspace';

/** One entry of a plane's route table: servers mount it, OpenAPI is emitted from it, the SDK calls it. */
export interface RouteSpec {
  readonly operationId: string;
  readonly method: HttpMethod;
  /** OpenAPI-style path, e.g. `/v0/workspaces/{name}`. */
  readonly path: string;
  readonly summary: string;
  readonly description?: string;
  readonly tag: string;
  readonly auth: AuthMode;
  /** Role the caller needs in the workspace (`workspace` routes) — `admin` or any member. */
  readonly role?: 'admin';
  readonly params?: z.ZodObject;
  readonly query?: z.ZodObject;
  readonly body?: z.ZodType;
  readonly bodyEncoding?: 'json' | 'form-or-json';
  /**
   * A raw (non-JSON) request body of these media types, read by the handler itself (e.g. the image
   * archive of POST /v0/images/import); documented as binary.
   */
  readonly rawBody?: readonly string[];
  /** Schema of one success body; for paginated routes, of one item. */
  readonly response: z.ZodType;
  /** Paginated list: a `{data, meta}` envelope from 2026-04-28, a bare array before. */
  readonly paginated?: boolean;
  /**
   * A list the reference's "Pagination" sentence does not name (control-plane.md: agents,
   * functions, models, jobs, applications, sandboxes, volumes, drives, policies, job executions,
   * execution tasks, sandbox schedules): a bare array under every version (issue 14 item 3; the
   * vendor SDK maps these bodies as arrays). The handler still pages; every page is fetched.
   */
  readonly bareList?: boolean;
  /**
   * A paginated list whose contract before 2026-04-28 is `limit`/`offset` (this schema) instead
   * of the cursor parameters, answering one bare-array window (reference §1.4: job executions,
   * default limit 20, maximum 100). From 2026-04-28 `query` applies and the answer is `{data, meta}`.
   */
  readonly legacyQuery?: z.ZodObject;
  /** 204 answers with no body (e.g. declining a pending image share, reference §0). */
  readonly successStatus?: 200 | 202 | 204;
  /** Error statuses worth documenting beyond the ones every route can return. */
  readonly errors?: readonly number[];
  /** The success body is this media type instead of JSON (build logs: `text/plain`). */
  readonly responseMediaType?: 'text/plain';
  /** Headers of the success answer worth documenting, name → description (e.g. upload URLs). */
  readonly responseHeaders?: Readonly<Record<string, string>>;
  /**
   * Other body/answer pairs of the same method and path, selected by a query parameter and
   * validated by whoever serves them (`POST /v0/images?upload=true`, the builds plane); documented
   * as `oneOf` next to `body`/`response`.
   */
  readonly variants?: readonly {
    readonly when: string;
    readonly body: z.ZodType;
    readonly response: z.ZodType;
  }[];
}

export function defineRoute<const R extends RouteSpec>(route: R): R {
  return route;
}

type Infer<T> = T extends z.ZodType ? z.output<T> : Record<string, never>;
type Input<T> = T extends z.ZodType ? z.input<T> : never;

export type RouteParams<R extends RouteSpec> = Infer<R['params']>;
export type RouteQuery<R extends RouteSpec> = Infer<R['query']>;
export type RouteBody<R extends RouteSpec> = R['body'] extends z.ZodType ? z.output<R['body']> : undefined;
export type RouteBodyInput<R extends RouteSpec> = Input<R['body']>;
export type RouteQueryInput<R extends RouteSpec> = R['query'] extends z.ZodType ? z.input<R['query']> : never;
export type RouteResponse<R extends RouteSpec> = z.output<R['response']>;
