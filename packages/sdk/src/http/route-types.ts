import type {
  RouteParams,
  RouteQueryInput,
  RouteBodyInput,
  RouteResponse,
  RouteSpec,
} from '@tarmac/contract';
import type { z } from 'zod';

/**
 * What a call of `route` takes: `params` when the route has path parameters, `body` when it has a
 * body, and an optional partial `query`. All derived from the contract's route table, so a route
 * added to the contract is callable with full types and no SDK change.
 */
export type RouteInput<R extends RouteSpec> = (R['params'] extends z.ZodType
  ? { params: RouteParams<R> }
  : { params?: undefined }) &
  (R['body'] extends z.ZodType ? { body: RouteBodyInput<R> } : { body?: undefined }) &
  (R['query'] extends z.ZodType ? { query?: Partial<RouteQueryInput<R>> } : { query?: undefined }) & {
    signal?: AbortSignal;
    headers?: Record<string, string>;
  };

/** Routes whose input is all optional can be called with no argument. */
export type OptionalInput<R extends RouteSpec> = R['params'] extends z.ZodType
  ? never
  : R['body'] extends z.ZodType
    ? never
    : RouteInput<R>;

/** One item of a paginated route, one body otherwise. */
export type RouteResult<R extends RouteSpec> = RouteResponse<R>;

export type PaginatedRoute = RouteSpec & { readonly paginated: true };
