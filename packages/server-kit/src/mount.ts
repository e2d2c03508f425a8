import {
  PAGINATION_SINCE,
  versionAtLeast,
  type ListQuery,
  type OffsetQuery,
  type RouteBody,
  type RouteParams,
  type RouteQuery,
  type RouteResponse,
  type RouteSpec,
} from '@tarmac/contract';
import type { Context, Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';
import {
  basicCredentials,
  requestedWorkspace,
  requirePrincipal,
  requireWorkspace,
  type Authenticator,
  type WorkspaceResolver,
} from './auth.js';
import type { RequestContext, ServerEnv } from './context.js';
import type { CursorCodec } from './cursor.js';
import { ApiError } from './errors.js';
import {
  cursorBinding,
  LEGACY_FETCH_SIZE,
  pageRequestOf,
  type PageRequest,
  type PageResult,
} from './pagination.js';
import { parseOrThrow } from './validation.js';

export interface RouteDeps {
  authenticator: Authenticator;
  workspaces: WorkspaceResolver;
  cursors: CursorCodec;
  /** Validate every response against the contract (tests turn this on to catch drift). */
  checkResponses?: boolean;
}

type Paginated<R extends RouteSpec> = R['paginated'] extends true ? true : false;
export type HandlerInput<R extends RouteSpec> = {
  params: RouteParams<R>;
  query: RouteQuery<R>;
  body: RouteBody<R>;
  ctx: RequestContext;
} & (Paginated<R> extends true ? { page: PageRequest } : unknown);
export type HandlerOutput<R extends RouteSpec> =
  Paginated<R> extends true ? PageResult<RouteResponse<R>> : RouteResponse<R> | Answer<RouteResponse<R>>;

/**
 * A success body with its own status, for routes whose success status depends on the outcome
 * (e.g. an image share: 200 applied at once, 202 pending; reference §1.9). The route's
 * `successStatus` is the default; both are documented in the contract.
 */
export class Answer<T> {
  constructor(
    readonly status: 200 | 202,
    readonly body: T,
  ) {}
}
export type RouteHandler<R extends RouteSpec> = (input: HandlerInput<R>) => Promise<HandlerOutput<R>>;

const toHonoPath = (path: string) => path.replace(/\{([^}]+)\}/g, ':$1');

/** Mounts one contract route: authenticate, parse (params, query, body), call the handler, shape the reply. */
export function mountRoute<R extends RouteSpec>(
  app: Hono<ServerEnv>,
  deps: RouteDeps,
  route: R,
  handler: RouteHandler<R>,
): void {
  app.on(route.method.toUpperCase(), toHonoPath(route.path), async (c) => {
    c.set('routePath', route.path);
    const principal =
      route.auth === 'public'
        ? undefined
        : await requirePrincipal(
            c,
            deps.authenticator,
            route.auth === 'workspace' ? requestedWorkspace(c) : undefined,
          );
    const workspace =
      route.auth === 'workspace' && principal
        ? await requireWorkspace(c, principal, deps.workspaces, route.role)
        : undefined;
    const params = route.params ? parseOrThrow(route.params, c.req.param(), 'path') : {};
    // A list with a legacy limit/offset contract parses it before 2026-04-28; its handler then
    // pages with the cursor query's defaults (runList cuts the window).
    const legacyWindow =
      route.paginated && route.legacyQuery && !versionAtLeast(c.var.apiVersion, PAGINATION_SINCE)
        ? (parseOrThrow(route.legacyQuery, c.req.query(), 'query') as OffsetQuery)
        : undefined;
    const query = route.query ? parseOrThrow(route.query, legacyWindow ? {} : c.req.query(), 'query') : {};
    const body = route.body ? parseOrThrow(route.body, await readBody(c, route), 'body') : undefined;
    const ctx: RequestContext = {
      requestId: c.var.requestId,
      logger: c.var.logger,
      apiVersion: c.var.apiVersion,
      principal,
      workspace,
      headers: c.req.raw.headers,
      basicAuth: route.auth === 'public' ? basicCredentials(c) : undefined,
    };
    const input = { params, query, body, ctx } as HandlerInput<R>;
    if (route.successStatus === 204) {
      await handler(input);
      return c.body(null, 204);
    }
    const status = (route.successStatus ?? 200) as ContentfulStatusCode;
    if (!route.paginated) {
      const result = await handler(input);
      if (result instanceof Answer)
        return c.json(check(deps, route.response, result.body) as object, result.status);
      return c.json(check(deps, route.response, result) as object, status);
    }
    return c.json(await runList(c, deps, route, input, handler as never, legacyWindow), status);
  });
}

async function runList<R extends RouteSpec>(
  c: Context<ServerEnv>,
  deps: RouteDeps,
  route: R,
  input: HandlerInput<R>,
  handler: (input: HandlerInput<R> & { page: PageRequest }) => Promise<PageResult<unknown>>,
  legacyWindow: OffsetQuery | undefined,
) {
  const query = input.query as unknown as ListQuery & Record<string, unknown>;
  const binding = cursorBinding({
    scope: input.ctx.workspace?.name ?? `principal:${input.ctx.principal?.id ?? ''}`,
    operationId: route.operationId,
    params: input.params as Record<string, unknown>,
    query,
  });
  if (route.bareList || !versionAtLeast(c.var.apiVersion, PAGINATION_SINCE)) {
    // Before 2026-04-28 a list is a bare array of everything (spec "Pagination"), or the
    // `limit`/`offset` window of it where the route's legacy contract says so (RouteSpec.legacyQuery).
    const end = legacyWindow ? legacyWindow.offset + legacyWindow.limit : Infinity;
    const items: unknown[] = [];
    let after: PageRequest['after'];
    for (;;) {
      const page = await handler({
        ...input,
        page: pageRequestOf({ ...query, limit: LEGACY_FETCH_SIZE }, after),
      });
      items.push(...page.items);
      if (!page.hasMore || !page.last || items.length >= end) {
        const window = legacyWindow ? items.slice(legacyWindow.offset, end) : items;
        return window.map((item) => check(deps, route.response, item));
      }
      after = page.last;
    }
  }
  const after = query.cursor ? deps.cursors.decode(query.cursor, binding) : undefined;
  const page = await handler({ ...input, page: pageRequestOf(query, after) });
  return {
    data: page.items.map((item) => check(deps, route.response, item)),
    meta: {
      hasMore: page.hasMore,
      nextCursor: page.hasMore && page.last ? deps.cursors.encode(page.last, binding) : '',
      total: page.total,
    },
  };
}

async function readBody(c: Context<ServerEnv>, route: RouteSpec): Promise<unknown> {
  const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/x-www-form-urlencoded' && route.bodyEncoding === 'form-or-json') {
    return Object.fromEntries(new URLSearchParams(await c.req.text()));
  }
  if (type !== '' && type !== 'application/json' && !type.endsWith('+json')) {
    throw new ApiError('unsupported_media_type', `Content-Type must be application/json, got "${type}"`);
  }
  const text = await c.req.text();
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ApiError('validation_error', 'body: is not valid JSON', {
      details: [{ field: 'body', message: 'is not valid JSON' }],
    });
  }
}

function check(deps: RouteDeps, schema: z.ZodType, value: unknown): unknown {
  if (!deps.checkResponses) return value;
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new Error(
      `response does not match the contract: ${JSON.stringify(result.error.issues).slice(0, 2000)}`,
    );
  }
  return value;
}
