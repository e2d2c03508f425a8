import { z } from 'zod';
import { listQuerySchema } from '../pagination.js';
import { defineRoute } from '../route.js';
import { UPLOAD_URL_HEADERS, uploadQuerySchema } from './build-routes.js';

/**
 * The five "CRUD-std" routes of a catalogue kind (reference §1: list, create, get, update, delete;
 * create answers 200, delete answers 200 with the deleted resource, duplicate names 409), plus
 * `GET .../revisions` where the kind has revisions. Operation ids follow the reference's naming.
 */
export interface CrudOptions<
  P extends string,
  I extends z.ZodType,
  O extends z.ZodType,
  L extends z.ZodObject,
  G extends z.ZodObject,
> {
  /** Collection path, e.g. `/v0/agents`. */
  path: string;
  /** Path parameter holding the name, e.g. `agentName`. */
  param: P;
  /** Singular and plural names for operation ids, e.g. `Agent`, `Agents`. */
  singular: string;
  plural: string;
  tag: string;
  input: I;
  output: O;
  /** Extra query of GET (e.g. `show_secrets`). */
  getQuery?: G;
  /** List query (pagination plus filters); defaults to the pagination parameters. */
  listQuery?: L;
  /** PUT creates the resource when it does not exist (models, applications). */
  upsert?: boolean;
  /** The list is a bare array under every version (RouteSpec.bareList; issue 14 item 3). */
  bareList?: boolean;
  /** Create and update take `?upload=true` (deploy from code, build-routes.ts). */
  upload?: boolean;
}

export function crudRoutes<
  P extends string,
  I extends z.ZodType,
  O extends z.ZodType,
  L extends z.ZodObject = typeof listQuerySchema,
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the shape of z.object({})
  G extends z.ZodObject = z.ZodObject<{}>,
>(o: CrudOptions<P, I, O, L, G>) {
  const params = nameParams(o.param);
  const listQuery = (o.listQuery ?? listQuerySchema) as L;
  const getQuery = (o.getQuery ?? z.object({})) as G;
  const item = `${o.path}/{${o.param}}`;
  const what = o.singular.toLowerCase();
  const upload = o.upload
    ? ({ query: uploadQuerySchema, responseHeaders: UPLOAD_URL_HEADERS } as const)
    : ({} as const);
  return {
    list: defineRoute({
      operationId: `list${o.plural}`,
      method: 'get',
      path: o.path,
      summary: `List ${o.plural.toLowerCase()} of the workspace`,
      tag: o.tag,
      auth: 'workspace',
      query: listQuery,
      response: o.output,
      paginated: true,
      ...(o.bareList ? { bareList: true as const } : {}),
    }),
    create: defineRoute({
      operationId: `create${o.singular}`,
      method: 'post',
      path: o.path,
      summary: `Create a ${what} (409 if the name is taken)`,
      tag: o.tag,
      auth: 'workspace',
      ...upload,
      body: o.input,
      response: o.output,
      errors: [400, 409],
    }),
    get: defineRoute({
      operationId: `get${o.singular}`,
      method: 'get',
      path: item,
      summary: `Get a ${what}`,
      tag: o.tag,
      auth: 'workspace',
      params,
      query: getQuery,
      response: o.output,
      errors: [403, 404],
    }),
    update: defineRoute({
      operationId: `update${o.singular}`,
      method: 'put',
      path: item,
      summary: o.upsert
        ? `Create or replace a ${what} (the name in the path wins)`
        : `Replace the spec, displayName and labels of a ${what}`,
      tag: o.tag,
      auth: 'workspace',
      params,
      ...upload,
      body: o.input,
      response: o.output,
      errors: o.upsert ? [400] : [400, 404],
    }),
    delete: defineRoute({
      operationId: `delete${o.singular}`,
      method: 'delete',
      path: item,
      summary: `Delete a ${what}; answers with the deleted ${what}`,
      tag: o.tag,
      auth: 'workspace',
      params,
      response: o.output,
      errors: [404, 409],
    }),
  };
}

/** `{<param>: string}` path parameters, typed by the parameter's name. */
export function nameParams<P extends string>(param: P) {
  return z.object({ [param]: z.string() } as { [K in P]: z.ZodString });
}

export function revisionsRoute<P extends string, R extends z.ZodType>(o: {
  path: string;
  param: P;
  singular: string;
  tag: string;
  response: R;
}) {
  return defineRoute({
    operationId: `list${o.singular}Revisions`,
    method: 'get',
    path: `${o.path}/{${o.param}}/revisions`,
    summary: `Revisions of a ${o.singular.toLowerCase()}, newest first`,
    tag: o.tag,
    auth: 'workspace',
    params: nameParams(o.param),
    response: z.array(o.response),
    errors: [404],
  });
}

/**
 * One page of the output of a workload's replicas (issue 16: `tarmac logs agent NAME [-f]`): the
 * archived output of replicas that ended (`archived`, on the first page only), then the current
 * replica's from byte `offset`. `replica` names the container the offset belongs to: a follower
 * whose replica changed starts the new one from 0.
 */
export const replicaLogsSchema = z
  .object({
    replica: z.string().nullable(),
    archived: z.string(),
    text: z.string(),
    next: z.number().int(),
  })
  .meta({ id: 'ReplicaLogs' });
export type ReplicaLogs = z.infer<typeof replicaLogsSchema>;

export function replicaLogsRoute<P extends string>(o: {
  path: string;
  param: P;
  singular: string;
  tag: string;
}) {
  return defineRoute({
    operationId: `get${o.singular}ReplicaLogs`,
    method: 'get',
    path: `${o.path}/{${o.param}}/replicas/logs`,
    summary: `Output (stdout and stderr) of a ${o.singular.toLowerCase()}'s replicas, from byte \`offset\``,
    tag: o.tag,
    auth: 'workspace',
    params: nameParams(o.param),
    query: z.object({
      offset: z.coerce.number().int('must be an integer').min(0, 'must be at least 0').default(0),
      replica: z.string().max(128, 'must be at most 128 characters').optional(),
    }),
    response: replicaLogsSchema,
    errors: [404],
  });
}
