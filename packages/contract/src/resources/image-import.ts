import { z } from 'zod';
import { defineRoute } from '../route.js';

/**
 * Importing a container image archive into the platform's local image store (issue 4 "Images":
 * `tarmac image import FILE`). The body is the raw archive — `docker save` output or an OCI image
 * layout tar, optionally gzip-compressed layers — sent as `application/x-tar` (or
 * `application/octet-stream`); it is streamed to disk, not parsed as JSON, and may be large.
 * After the import, sandboxes can use `spec.runtime.image: <ref>`.
 */
export const imageImportQuerySchema = z.object({
  ref: z
    .string()
    .min(1, 'must not be empty')
    .max(256, 'must be at most 256 characters')
    .regex(
      /^[a-z0-9][a-z0-9._/-]*(:[A-Za-z0-9_][A-Za-z0-9._-]*)?$/,
      'must be an image reference such as myorg/tool:1.0',
    )
    .meta({
      description:
        'Reference to store the image under in this workspace, e.g. `myorg/tool:1.0` (`:latest` when no tag).',
    }),
});

export const imageImportResultSchema = z
  .object({
    ref: z.string().meta({ description: 'Canonical reference the image is stored under.' }),
    layers: z.number().int(),
    createdAt: z.string(),
  })
  .meta({ id: 'ImageImportResult' });
export type ImageImportResult = z.infer<typeof imageImportResultSchema>;

export const imageImportRoutes = {
  importImage: defineRoute({
    operationId: 'importImage',
    method: 'post',
    path: '/v0/images/import',
    summary: 'Import a docker-save or OCI image archive into the local image store',
    description:
      "Raw request body (not JSON): the archive, `Content-Type: application/x-tar`. Served before the management body limit and streamed to disk, up to the engine's archive limit (16 GiB by default; larger is a 413). Workspace admins only. The image belongs to the workspace: the same ref in another workspace is another image, and other workspaces reach it only when it is shared (POST /v0/images/{resourceType}/{imageName}/share of an image registered with this ref). The built-in `tarmac/base:latest` cannot be replaced.",
    tag: 'Images',
    auth: 'workspace',
    role: 'admin',
    query: imageImportQuerySchema,
    rawBody: ['application/x-tar', 'application/octet-stream'],
    response: imageImportResultSchema,
    errors: [400, 403, 413, 415],
  }),
} as const;
