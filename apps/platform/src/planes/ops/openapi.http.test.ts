// Issue "Platform core" §8: the OpenAPI 3.1 document generated from the contract, validated against
// the official OpenAPI 3.1 JSON schema, with every route of the route tables and every $ref resolving;
// and the human-readable reference page.
import { Validator } from '@seriousme/openapi-schema-validator';
import { sandboxApiRoutes } from '@tarmac/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPlaneRoutes, listenerRoutes, managementRoutes } from '../../app.js';
import { openTestPlatform, testDatabases, type TestPlatform } from '../../test-support/harness.js';

type Document = {
  openapi: string;
  paths: Record<string, Record<string, { operationId: string; parameters?: { name: string; in: string }[] }>>;
  components: { schemas: Record<string, unknown> };
};

function refsOf(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => refsOf(v, found));
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string') found.push(inner);
      else refsOf(inner, found);
    }
  }
  return found;
}

function resolvePointer(document: unknown, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  return ref
    .slice(2)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], document);
}

const [sqlite] = testDatabases({});

describe('OpenAPI document and reference page', () => {
  let t: TestPlatform & { dispose(): Promise<void> };
  let doc: Document;
  beforeAll(async () => {
    t = await openTestPlatform(sqlite!);
    const res = await t.request('/v0/openapi.json', { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    doc = (await res.json()) as Document;
  });
  afterAll(async () => t.dispose());

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc) as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('contains every route of the route tables, once, with its operationId and path parameters', () => {
    const operationIds: string[] = [];
    for (const route of [...managementRoutes, ...buildPlaneRoutes, ...listenerRoutes]) {
      const operation = doc.paths[route.path]?.[route.method];
      expect(operation, `${route.method} ${route.path}`).toBeDefined();
      expect(operation!.operationId).toBe(route.operationId);
      for (const name of route.path.match(/\{([^}]+)\}/g) ?? []) {
        const param = name.slice(1, -1);
        expect(
          operation!.parameters?.some((p) => p.in === 'path' && p.name === param),
          param,
        ).toBe(true);
      }
      operationIds.push(route.operationId);
    }
    expect(new Set(operationIds).size).toBe(operationIds.length);
    const documented = Object.values(doc.paths).flatMap((item) => Object.keys(item)).length;
    expect(documented).toBe(managementRoutes.length + buildPlaneRoutes.length + listenerRoutes.length);
  });

  // Issue 14 item 8: the image import (a raw archive body, served at the listener) is documented.
  it('documents POST /v0/images/import with its raw archive body', () => {
    const op = doc.paths['/v0/images/import']?.post as unknown as {
      requestBody: { content: Record<string, { schema: unknown }> };
    };
    expect(op.requestBody.content['application/x-tar']?.schema).toEqual({ type: 'string', format: 'binary' });
  });

  // Issue 15: deploy from code — ?upload=true with its upload URL header, the upload PUT, the logs.
  it('documents the code-upload flow: ?upload=true, the upload URL header, the archive PUT and the logs', () => {
    type Op = {
      parameters: { name: string; in: string }[];
      requestBody?: { content: Record<string, { schema: { oneOf?: unknown[] } }> };
      responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, unknown> }>;
    };
    const op = (path: string, method: string) => doc.paths[path]?.[method] as unknown as Op;
    for (const [path, method] of [
      ['/v0/agents', 'post'],
      ['/v0/agents/{agentName}', 'put'],
      ['/v0/functions', 'post'],
      ['/v0/jobs/{jobId}', 'put'],
      ['/v0/images', 'post'],
    ] as const) {
      const o = op(path, method);
      expect(
        o.parameters.some((p) => p.in === 'query' && p.name === 'upload'),
        `${method} ${path}`,
      ).toBe(true);
      expect(Object.keys(o.responses['200']?.headers ?? {})).toEqual([
        'X-Service-Upload-Url',
        'X-Blaxel-Upload-Url',
      ]);
    }
    expect(op('/v0/images', 'post').requestBody?.content['application/json']?.schema.oneOf).toHaveLength(2);
    const put = op('/v0/builds/uploads/{token}', 'put');
    expect(Object.keys(put.requestBody!.content)).toContain('application/zip');
    expect(Object.keys(put.responses)).toEqual(expect.arrayContaining(['200', '400', '403', '413']));
    for (const path of ['/v0/agents/{agentName}/logs', '/v0/images/{resourceType}/{imageName}/logs']) {
      const logs = op(path, 'get');
      expect(Object.keys(logs.responses['200']?.content ?? {})).toEqual(['text/plain']);
      expect(logs.parameters.some((p) => p.in === 'query' && p.name === 'follow')).toBe(true);
    }
  });

  it('every $ref resolves inside the document', () => {
    const refs = refsOf(doc);
    expect(refs.length).toBeGreaterThan(5);
    for (const ref of new Set(refs)) expect(resolvePointer(doc, ref), ref).toBeDefined();
    expect(doc.components.schemas.Error).toBeDefined();
  });

  it('every documented operation is served by the app (none answers route_not_found)', async () => {
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of Object.keys(item)) {
        // Served by the listener in front of the app (its own e2e tests), not by the app.
        if (listenerRoutes.some((r) => r.path === path && r.method === method)) continue;
        // The builds plane's (compose.ts mounts it; an app without it has none): tests/e2e/builds.
        if (buildPlaneRoutes.some((r) => r.path === path && r.method === method)) continue;
        // Read-only probes: mutating methods are probed with an invalid body or an unknown name.
        const concrete = path.replace(/\{[^}]+\}/g, 'no-such-thing');
        const res = await t.request(`${concrete}?workspace=default`, {
          method: method.toUpperCase(),
          ...(method === 'post' || method === 'put' ? { body: { __probe: true } } : {}),
        });
        const body = res.headers.get('content-type')?.includes('json')
          ? ((await res.json()) as { error?: string })
          : {};
        expect(body.error, `${method} ${path}`).not.toBe('route_not_found');
      }
    }
  });

  it('serves a human-readable API reference at /docs listing the operations', async () => {
    const res = await t.request('/docs', { key: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const html = await res.text();
    expect(html).toMatch(/<html/i);
    for (const route of managementRoutes)
      expect(html, route.operationId).toContain(`<code>${route.path}</code>`);
  });
});

// Issue 14 item 9: the sandbox API (what sandboxd serves at {sandbox_url}) has its own document,
// generated from the contract's sandbox route table and schemas, checked by the same validator.
describe('sandbox API OpenAPI document', () => {
  let t: TestPlatform & { dispose(): Promise<void> };
  let doc: Document & { servers: { url: string }[] };
  beforeAll(async () => {
    t = await openTestPlatform(sqlite!);
    const res = await t.request('/v0/sandbox-openapi.json', { key: null });
    expect(res.status).toBe(200);
    doc = (await res.json()) as typeof doc;
  });
  afterAll(async () => t.dispose());

  it('is a valid OpenAPI 3.1 document whose $refs resolve', async () => {
    const result = await new Validator().validate(structuredClone(doc) as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    for (const ref of new Set(refsOf(doc))) expect(resolvePointer(doc, ref), ref).toBeDefined();
  });

  it('lists every route of the sandbox route table with its path parameters, and the core ones', () => {
    for (const route of sandboxApiRoutes) {
      const operation = doc.paths[route.path]?.[route.method];
      expect(operation?.operationId, `${route.method} ${route.path}`).toBe(route.operationId);
      for (const name of route.path.match(/\{([^}]+)\}/g) ?? []) {
        expect(operation!.parameters?.some((p) => p.in === 'path' && p.name === name.slice(1, -1))).toBe(
          true,
        );
      }
    }
    const ids = sandboxApiRoutes.map((r) => r.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const [path, method] of [
      ['/process', 'post'],
      ['/filesystem/{path}', 'put'],
      ['/network/process/{pid}/ports', 'get'],
      ['/mcp', 'post'],
    ] as const) {
      expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    }
    expect(doc.servers[0]?.url).toMatch(/\/\{workspace\}\/sandboxes\/\{sandbox\}$/);
  });
});
