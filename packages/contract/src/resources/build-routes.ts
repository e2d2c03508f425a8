import { z } from 'zod';
import { defineRoute } from '../route.js';
import { IMAGE_RESOURCE_TYPES } from './image-types.js';

/**
 * Deploy from code (issue 15; reference control-plane.md §1.2 "Code-upload", §3.3): the shapes of
 * the upload flow. `?upload=true` on POST/PUT of agents, functions, jobs and applications (their
 * create/update routes carry `uploadQuerySchema` and `UPLOAD_URL_HEADERS`) and on `POST /v0/images`
 * (the `imageUploadSchema` body) answers a signed, single-use PUT URL; the archive PUT to it
 * starts the build; the build log is read or followed at `.../logs`.
 */
export const uploadQuerySchema = z.object({
  upload: z.enum(['true', 'false'], { error: 'must be true or false' }).optional().meta({
    description:
      '`true`: the resource goes UPLOADING and the answer carries a signed, single-use upload URL in `X-Service-Upload-Url` (PUT the zip or tar.gz of the code there; it is built into an image).',
  }),
});

/** Response headers of a `?upload=true` answer (the public platform's name too). */
export const UPLOAD_URL_HEADERS = {
  'X-Service-Upload-Url':
    'With `?upload=true`: the short-lived, single-use URL to PUT the code archive to (403 once used or expired).',
  'X-Blaxel-Upload-Url': 'Same as X-Service-Upload-Url.',
} as const;

/** `POST /v0/images?upload=true` body: an image built from code, without a deployment (`tarmac push`). */
export const imageUploadSchema = z
  .object({
    resourceType: z.enum(IMAGE_RESOURCE_TYPES, {
      error: `must be one of ${IMAGE_RESOURCE_TYPES.join(', ')}`,
    }),
    name: z.string().regex(/^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$/, 'must be a lowercase name (a-z, 0-9, -)'),
  })
  .meta({ id: 'ImageUpload' });

export const imageUploadStartedSchema = z
  .object({ name: z.string(), resourceType: z.string(), message: z.string(), status: z.literal('UPLOADING') })
  .meta({ id: 'ImageUploadStarted' });

export const uploadReceivedSchema = z
  .object({ message: z.string(), buildId: z.string() })
  .meta({ id: 'UploadReceived' });

export const buildLogsQuerySchema = z.object({
  follow: z
    .enum(['true', 'false'], { error: 'must be true or false' })
    .optional()
    .meta({ description: '`true`: keep the answer open and stream new lines until the build ends.' }),
});

/** Media types an upload URL takes: a zip or a gzip-compressed tar. */
export const UPLOAD_MEDIA_TYPES = [
  'application/zip',
  'application/gzip',
  'application/x-gzip',
  'application/octet-stream',
] as const;

const logsOf = (kind: string, param: string, singular: string) =>
  defineRoute({
    operationId: `get${singular}BuildLogs`,
    method: 'get',
    path: `/v0/${kind}/{${param}}/logs`,
    summary: `The latest build log of a ${singular.toLowerCase()} (text lines; follow=true streams)`,
    tag: kind,
    auth: 'workspace',
    params: z.object({ [param]: z.string() }),
    query: buildLogsQuerySchema,
    response: z.string(),
    responseMediaType: 'text/plain',
    errors: [404],
  });

/** Served by the builds plane (compose.ts mounts it before the catalogue routes). */
export const buildLogRoutes = {
  agentLogs: logsOf('agents', 'agentName', 'Agent'),
  functionLogs: logsOf('functions', 'functionName', 'Function'),
  jobLogs: logsOf('jobs', 'jobId', 'Job'),
  applicationLogs: logsOf('applications', 'applicationName', 'Application'),
  imageLogs: defineRoute({
    operationId: 'getImageBuildLogs',
    method: 'get',
    path: '/v0/images/{resourceType}/{imageName}/logs',
    summary: 'The latest build log of an image built from code (POST /v0/images?upload=true)',
    tag: 'images',
    auth: 'workspace',
    params: z.object({ resourceType: imageUploadSchema.shape.resourceType, imageName: z.string() }),
    query: buildLogsQuerySchema,
    response: z.string(),
    responseMediaType: 'text/plain',
    errors: [400, 404],
  }),
};

/** Served at the listener (a streamed, capped raw body, like the image import). */
export const buildUploadRoutes = {
  uploadArchive: defineRoute({
    operationId: 'uploadBuildArchive',
    method: 'put',
    path: '/v0/builds/uploads/{token}',
    summary: 'PUT the code archive to an upload URL (the signed token is the credential)',
    description:
      'A zip or tar.gz of the folder. 403 when the URL is forged, already used or expired; 413 over the upload limit; 400 for an unsafe archive (`..`, absolute names, links leaving the folder). The build then runs; follow it at `.../logs?follow=true`.',
    tag: 'builds',
    auth: 'public',
    params: z.object({ token: z.string() }),
    rawBody: UPLOAD_MEDIA_TYPES,
    response: uploadReceivedSchema,
    errors: [400, 403, 413],
  }),
};
