import { z } from 'zod';
import type { OpenApiDocument, OpenApiInfo } from './openapi.js';
import { sandboxApiError, sandboxApiRoutes, type SandboxRoute } from './sandbox-api/routes.js';

export { sandboxApiRoutes, type SandboxRoute } from './sandbox-api/routes.js';

/**
 * The OpenAPI 3.1 document of the sandbox API (issue 14 item 9: `/process`, `/filesystem`, … —
 * what sandboxd serves at `{sandbox_url}`), generated from the route table and the zod schemas
 * of ./sandbox-api. Kept apart from ./sandbox-api (which sandboxd bundles): it needs classic zod's
 * JSON Schema emitter. Errors are `{error}` (spec "Errors": the sandbox plane's vocabulary).
 */
type JsonSchema = Record<string, unknown>;

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid request: the message names the field',
  401: 'Missing or invalid credentials (the platform gateway)',
  403: 'Refused: Host or Origin not this sandbox’s (DNS-rebinding protection of /mcp)',
  404: 'No such file, directory, process or upload (or the sandbox does not exist)',
  405: 'Method not allowed (see Allow)',
  409: 'Conflicts with the current state (e.g. a process name in use)',
  413: 'Body too large',
  416: 'Range not satisfiable',
  422: 'The operation failed on the filesystem (the message says why)',
  429: 'Too many open streams',
  501: 'Not available in this sandbox',
};

function schemaOf(schema: z.core.$ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

function parameters(route: SandboxRoute): JsonSchema[] {
  const path = (route.path.match(/\{([^}]+)\}/g) ?? []).map((p) => {
    const name = p.slice(1, -1);
    return {
      name,
      in: 'path',
      required: true,
      ...(name === 'path'
        ? {
            description:
              'A file path, relative to the working directory or absolute when it starts with %2F; may contain /',
          }
        : {}),
      schema: { type: 'string' },
    };
  });
  if (!route.query) return path;
  const q = schemaOf(route.query, 'input') as {
    properties?: Record<string, JsonSchema>;
    required?: string[];
  };
  return [
    ...path,
    ...Object.entries(q.properties ?? {}).map(([name, schema]) => ({
      name,
      in: 'query',
      required: (q.required ?? []).includes(name),
      schema,
    })),
  ];
}

function success(route: SandboxRoute): JsonSchema {
  const kind = route.kind ?? 'json';
  if (kind === 'html')
    return { description: 'HTML', content: { 'text/html': { schema: { type: 'string' } } } };
  const schema = route.response ? schemaOf(route.response, 'output') : {};
  if (kind === 'ndjson') {
    return {
      description: 'A stream of JSON objects, one per line, each of this shape',
      content: { 'application/x-ndjson': { schema } },
    };
  }
  return { description: 'Success', content: { 'application/json': { schema } } };
}

function operation(route: SandboxRoute): JsonSchema {
  const error = (status: number) => ({
    description: STATUS_TEXT[status] ?? 'Error',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/SandboxError' } } },
  });
  const body = route.body ? schemaOf(route.body, 'input') : undefined;
  const multipart = {
    'multipart/form-data': {
      schema: {
        type: 'object',
        properties: { file: { type: 'string', contentMediaType: 'application/octet-stream' } },
      },
    },
  };
  return {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.tag],
    parameters: parameters(route),
    ...(body || route.multipart
      ? {
          requestBody: {
            required: true,
            content: {
              ...(body ? { 'application/json': { schema: body } } : {}),
              ...(route.multipart ? multipart : {}),
            },
          },
        }
      : {}),
    responses: {
      '200': success(route),
      ...Object.fromEntries([401, ...(route.errors ?? [])].sort().map((s) => [String(s), error(s)])),
    },
  };
}

export function buildSandboxApiDocument(info: OpenApiInfo & { runUrl?: string }): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const route of sandboxApiRoutes) (paths[route.path] ??= {})[route.method] = operation(route);
  return {
    openapi: '3.1.0',
    info: {
      title: info.title,
      version: info.version,
      ...(info.description ? { description: info.description } : {}),
    },
    servers: [
      {
        // Path style; a sandbox's metadata.url (host style, sbx-<name>-<ws>.<region>.<domain>) too.
        url: `${info.runUrl ?? ''}/{workspace}/sandboxes/{sandbox}`,
        description: 'A sandbox: {run_url}/{workspace}/sandboxes/{name}, or its metadata.url',
        variables: { workspace: { default: 'default' }, sandbox: { default: 'my-sandbox' } },
      },
    ],
    security: [{ bearerAuth: [] }],
    tags: [...new Set(sandboxApiRoutes.map((r) => r.tag))].map((name) => ({ name })),
    paths,
    components: {
      schemas: { SandboxError: schemaOf(sandboxApiError, 'output') },
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description:
            'An API key or JWT of a principal who can see the sandbox’s workspace (checked by the platform gateway).',
        },
      },
    },
  };
}
