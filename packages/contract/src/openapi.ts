import { z } from 'zod';
import { managementErrorSchema } from './errors.js';
import { pageEnvelopeSchema } from './pagination.js';
import type { RouteSpec } from './route.js';
import { API_VERSIONS, DEFAULT_API_VERSION, PAGINATION_SINCE } from './versions.js';

/**
 * Emits the OpenAPI 3.1 document from the route tables. OpenAPI 3.1 schemas are JSON Schema
 * 2020-12, which zod emits natively; named schemas (`.meta({id})`) become `components.schemas`.
 */
type JsonSchema = Record<string, unknown>;
export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, unknown>> };

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid request: the message names the field',
  401: 'Missing, malformed, expired or revoked credentials',
  403: 'The caller lacks the role this needs',
  404: 'No such resource in a workspace the caller can see',
  409: 'Conflicts with the current state (e.g. name taken)',
  413: 'The request body is over the limit',
  503: 'Not ready',
};

class SchemaCollector {
  readonly components: Record<string, JsonSchema> = {};

  convert(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
    const json = z.toJSONSchema(schema, { io, unrepresentable: 'any', reused: 'inline' }) as JsonSchema;
    const { $defs, $schema: _schema, ...rest } = json as JsonSchema & { $defs?: Record<string, JsonSchema> };
    for (const [id, def] of Object.entries($defs ?? {}))
      this.components[id] ??= rewriteRefs(def) as JsonSchema;
    return rewriteRefs(rest) as JsonSchema;
  }
}

function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) =>
        key === '$ref' && typeof inner === 'string'
          ? [key, inner.replace('#/$defs/', '#/components/schemas/')]
          : [key, rewriteRefs(inner)],
      ),
    );
  }
  return value;
}

function parametersOf(
  schema: z.ZodObject | undefined,
  location: 'path' | 'query',
  collector: SchemaCollector,
) {
  if (!schema) return [];
  const json = collector.convert(schema, 'input') as {
    properties?: Record<string, JsonSchema>;
    required?: string[];
  };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || (json.required ?? []).includes(name),
    ...(typeof property.description === 'string' ? { description: property.description } : {}),
    schema: property,
  }));
}

/** The legacy window parameters (RouteSpec.legacyQuery) the cursor query does not have already. */
function legacyParameters(route: RouteSpec, collector: SchemaCollector) {
  const current = new Set(Object.keys(route.query?.shape ?? {}));
  return parametersOf(route.legacyQuery, 'query', collector)
    .filter((p) => !current.has(p.name))
    .map((p) => ({
      ...p,
      required: false,
      description: `Before ${PAGINATION_SINCE} only (with \`limit\`); ignored from ${PAGINATION_SINCE}.`,
    }));
}

const versionParameter = {
  name: 'Service-Version',
  in: 'header',
  required: false,
  description: `API version; absent means ${DEFAULT_API_VERSION}. Alias: Blaxel-Version.`,
  schema: { type: 'string', enum: [...API_VERSIONS] },
};
const workspaceParameters = [
  {
    name: 'workspace',
    in: 'query',
    required: false,
    description: 'Workspace name; may be omitted by callers with a single workspace.',
    schema: { type: 'string' },
  },
  {
    name: 'X-Service-Workspace',
    in: 'header',
    required: false,
    description: 'Workspace name (alias: X-Blaxel-Workspace).',
    schema: { type: 'string' },
  },
];

function operationOf(route: RouteSpec, collector: SchemaCollector) {
  const variants = route.variants ?? [];
  const alternatives = (main: JsonSchema, others: JsonSchema[]): JsonSchema =>
    others.length === 0
      ? main
      : {
          oneOf: [main, ...others],
          description: `Also: ${variants.map((v) => v.when).join('; ')}.`,
        };
  const item = alternatives(
    collector.convert(route.response, 'output'),
    variants.map((v) => collector.convert(v.response, 'output')),
  );
  const success = route.bareList
    ? { type: 'array', items: item }
    : route.paginated
      ? {
          oneOf: [
            collector.convert(pageEnvelopeSchema(route.response), 'output'),
            { type: 'array', items: item },
          ],
          description: `\`{data, meta}\` from ${PAGINATION_SINCE}; a bare array before.`,
        }
      : item;
  const errorResponse = (status: number) => ({
    description: STATUS_TEXT[status] ?? 'Error',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  });
  const errorStatuses = new Set<number>([...(route.auth === 'public' ? [] : [401]), ...(route.errors ?? [])]);
  if (route.query || route.body) errorStatuses.add(400);
  const bodySchema = route.body
    ? alternatives(
        collector.convert(route.body, 'input'),
        variants.map((v) => collector.convert(v.body, 'input')),
      )
    : undefined;
  const headers = Object.entries(route.responseHeaders ?? {}).map(([name, description]) => [
    name,
    { description, schema: { type: 'string' } },
  ]);
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [route.tag],
    ...(route.auth === 'public' ? { security: [] } : {}),
    parameters: [
      ...parametersOf(route.params, 'path', collector),
      ...parametersOf(route.query, 'query', collector),
      ...legacyParameters(route, collector),
      ...(route.auth === 'workspace' ? workspaceParameters : []),
      versionParameter,
    ],
    ...(route.rawBody
      ? {
          requestBody: {
            required: true,
            content: Object.fromEntries(
              route.rawBody.map((type) => [type, { schema: { type: 'string', format: 'binary' } }]),
            ),
          },
        }
      : {}),
    ...(bodySchema
      ? {
          requestBody: {
            required: true,
            content:
              route.bodyEncoding === 'form-or-json'
                ? {
                    'application/x-www-form-urlencoded': { schema: bodySchema },
                    'application/json': { schema: bodySchema },
                  }
                : { 'application/json': { schema: bodySchema } },
          },
        }
      : {}),
    responses: {
      [String(route.successStatus ?? 200)]:
        route.successStatus === 204
          ? { description: 'Success (no body)' }
          : {
              description: 'Success',
              ...(headers.length > 0 ? { headers: Object.fromEntries(headers) } : {}),
              content: { [route.responseMediaType ?? 'application/json']: { schema: success } },
            },
      ...Object.fromEntries(
        [...errorStatuses].sort().map((status) => [String(status), errorResponse(status)]),
      ),
    },
  };
}

export interface OpenApiInfo {
  title: string;
  version: string;
  description?: string;
  serverUrl?: string;
}

export function buildOpenApiDocument(routes: readonly RouteSpec[], info: OpenApiInfo): OpenApiDocument {
  const collector = new SchemaCollector();
  collector.convert(managementErrorSchema, 'output');
  const paths: OpenApiDocument['paths'] = {};
  for (const route of routes) {
    (paths[route.path] ??= {})[route.method] = operationOf(route, collector);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: info.title,
      version: info.version,
      ...(info.description ? { description: info.description } : {}),
    },
    ...(info.serverUrl ? { servers: [{ url: info.serverUrl }] } : {}),
    security: [{ bearerAuth: [] }],
    tags: [...new Set(routes.map((route) => route.tag))].map((name) => ({ name })),
    paths,
    components: {
      schemas: collector.components,
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description:
            'An API key or a JWT from /oauth/token, in `Authorization` or `X-Service-Authorization` (alias X-Blaxel-Authorization).',
        },
      },
    },
  };
}
