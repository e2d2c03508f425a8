import {
  invalidField,
  parseOrThrow,
  notFound,
  requirePrincipal,
  requireWorkspace,
  type Authenticator,
  type ServerEnv,
  type WorkspaceResolver,
} from '@tarmac/server-kit';
import type { Context, Hono } from 'hono';
import { stream } from 'hono/streaming';
import { buildLogsQuerySchema, imageUploadSchema } from '@tarmac/contract';
import type { BuildTarget, ImageResourceType } from './build-records.js';
import type { BuildsService } from './builds.service.js';

/**
 * The management-API half of the code-upload flow (issue 15; reference §1.1 "Code-upload"):
 *  - POST/PUT `/v0/{agents|functions|jobs}[/{name}]?upload=true`: the catalogue's own route runs
 *    (it parses, creates or updates); on success the record goes UPLOADING and the answer carries
 *    `X-Service-Upload-Url` and `X-Blaxel-Upload-Url` (the public platform's header name);
 *  - `POST /v0/images?upload=true` with `{resourceType, name}`: an image-only build (bl push);
 *  - `GET /v0/{kind}/{name}/logs[?follow=true]`: the latest build's log as text lines.
 * Registered before the catalogue routes so the middleware wraps them.
 */
const WORKLOADS: Record<string, { kind: BuildTarget['kind']; imageType: ImageResourceType }> = {
  agents: { kind: 'agent', imageType: 'agents' },
  functions: { kind: 'function', imageType: 'functions' },
  jobs: { kind: 'job', imageType: 'jobs' },
  applications: { kind: 'application', imageType: 'applications' },
};
// Shapes from the contract (packages/contract resources/build-routes.ts), so the OpenAPI
// document says what is served here.
const imageUploadBody = imageUploadSchema;

export interface BuildRoutesDeps {
  builds: BuildsService;
  authenticator: Authenticator;
  workspaces: WorkspaceResolver;
}

export function registerBuildRoutes(app: Hono<ServerEnv>, d: BuildRoutesDeps): void {
  app.use('/v0/*', async (c, next) => {
    if (c.req.query('upload') !== 'true') return next();
    const parts = c.req.path.split('/').filter(Boolean); // ['v0', kind, name?]
    if (c.req.method === 'POST' && parts.length === 2 && parts[1] === 'images') return imageUpload(c, d);
    const workload = WORKLOADS[parts[1] ?? ''];
    const shaped =
      (c.req.method === 'POST' && parts.length === 2) || (c.req.method === 'PUT' && parts.length === 3);
    if (!workload || !shaped) return next();
    await next();
    if (c.res.status !== 200) return;
    const view = (await c.res.clone().json()) as { metadata: { name: string }; status?: string };
    const access = c.get('workspace');
    const principal = c.get('principal');
    if (!access || !principal) return;
    const target = { ...workload, name: view.metadata.name };
    const { uploadUrl } = await d.builds.open(access.name, principal.id, target);
    c.res = new Response(JSON.stringify({ ...view, status: 'UPLOADING' }), {
      status: 200,
      headers: { 'content-type': 'application/json', ...uploadHeaders(uploadUrl) },
    });
  });

  app.get('/v0/images/:resourceType/:name/logs', async (c) => {
    const imageType = imageUploadBody.shape.resourceType.safeParse(c.req.param('resourceType'));
    if (!imageType.success)
      throw invalidField('path.resourceType', 'must be agents, functions, jobs or sandboxes');
    return serveLog(c, d, { kind: 'image', imageType: imageType.data, name: c.req.param('name') });
  });
  app.get('/v0/:kind/:name/logs', async (c, next) => {
    const workload = WORKLOADS[c.req.param('kind')];
    if (!workload) return next();
    return serveLog(c, d, { ...workload, name: c.req.param('name') });
  });
}

/** The latest build's log as text; `follow=true` streams new lines until the build ends. */
async function serveLog(c: Context<ServerEnv>, d: BuildRoutesDeps, target: BuildTarget) {
  const principal = await requirePrincipal(c, d.authenticator);
  const access = await requireWorkspace(c, principal, d.workspaces, undefined);
  const log = d.builds.logOf(access.name, target);
  if (!log) throw notFound(`Build of ${target.imageType}/${target.name}`);
  const { follow } = parseOrThrow(buildLogsQuerySchema, c.req.query(), 'query');
  c.header('content-type', 'text/plain; charset=utf-8');
  if (follow !== 'true' || log.done)
    return c.body(
      log
        .snapshot()
        .map((l) => `${l}\n`)
        .join(''),
    );
  return stream(c, async (s) => {
    const pending: string[] = log.snapshot().map((l) => `${l}\n`);
    let finished = false;
    let wake: (() => void) | undefined;
    const stop = log.follow((line) => {
      if (line === null) finished = true;
      else pending.push(`${line}\n`);
      wake?.();
    });
    s.onAbort(() => {
      finished = true;
      wake?.();
    });
    try {
      for (;;) {
        while (pending.length > 0) await s.write(pending.shift()!);
        if (finished) break;
        await new Promise<void>((r) => (wake = r));
      }
    } finally {
      stop();
    }
  });
}

async function imageUpload(c: Context<ServerEnv>, d: BuildRoutesDeps) {
  const principal = await requirePrincipal(c, d.authenticator);
  const access = await requireWorkspace(c, principal, d.workspaces, undefined);
  const raw: unknown = await c.req.json().catch(() => {
    throw invalidField('body', 'must be JSON {resourceType, name}');
  });
  const parsed = imageUploadBody.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw invalidField(`body.${issue.path.join('.') || ''}`, issue.message);
  }
  const { resourceType, name } = parsed.data;
  await d.builds.openImage(access.name, principal.id, resourceType, name);
  const { uploadUrl } = await d.builds.open(access.name, principal.id, {
    kind: 'image',
    imageType: resourceType,
    name,
  });
  return c.json(
    {
      name,
      resourceType,
      message: `Upload the archive to the URL in X-Service-Upload-Url`,
      status: 'UPLOADING',
    },
    200,
    uploadHeaders(uploadUrl),
  );
}

function uploadHeaders(url: string): Record<string, string> {
  return { 'x-service-upload-url': url, 'x-blaxel-upload-url': url };
}
