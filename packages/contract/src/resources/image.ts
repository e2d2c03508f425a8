import { z } from 'zod';
import { listQuerySchema } from '../pagination.js';
import { defineRoute } from '../route.js';
import { coreEventSchema } from './envelope.js';
import { IMAGE_RESOURCE_TYPES } from './image-types.js';
import {
  UPLOAD_URL_HEADERS,
  imageUploadSchema,
  imageUploadStartedSchema,
  uploadQuerySchema,
} from './build-routes.js';

/**
 * Container images, tags and sharing (spec "Container image (share result)", Management API rules
 * 1-3; reference §1.9). An image ref is `{resourceType}/{name}:{tag}`.
 */
export { IMAGE_RESOURCE_TYPES, type ImageResourceType } from './image-types.js';
const resourceTypeSchema = z.enum(IMAGE_RESOURCE_TYPES, {
  error: `must be one of ${IMAGE_RESOURCE_TYPES.join(', ')}`,
});
const imageNameSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(128, 'must be at most 128 characters')
  .regex(/^[a-z0-9]([a-z0-9._-]*[a-z0-9])?$/, 'must be lowercase letters, digits, ".", "_" and "-"');
const tagNameSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(128, 'must be at most 128 characters')
  .regex(/^[A-Za-z0-9_][A-Za-z0-9._-]*$/, 'must be a valid image tag');

export const imageTagSchema = z
  .object({ name: z.string(), size: z.number().int(), createdAt: z.string(), updatedAt: z.string() })
  .meta({ id: 'ImageTag' });

export const imageSchema = z
  .object({
    metadata: z.object({
      name: z.string(),
      displayName: z.string(),
      resourceType: z.string(),
      workspace: z.string(),
      sourceWorkspace: z.string(),
      createdAt: z.string(),
      updatedAt: z.string(),
      lastDeployedAt: z.string(),
      status: z.string(),
      events: z.array(coreEventSchema),
    }),
    spec: z.object({ size: z.number().int(), tags: z.array(imageTagSchema) }),
  })
  .meta({ id: 'Image' });
export type Image = z.infer<typeof imageSchema>;

/**
 * `POST /v0/images` (reference §1.9). Building from uploaded code needs the build service (not on
 * this platform yet), so `image` — a prebuilt ref whose tag becomes the image's tag — is required.
 */
export const imageCreateSchema = z.object({
  resourceType: resourceTypeSchema,
  name: imageNameSchema,
  generation: z.enum(['mk2', 'mk3'], { error: 'must be one of mk2, mk3' }).optional(),
  image: z.string().min(1, 'must not be empty').max(512, 'must be at most 512 characters'),
  size: z.number().int('must be an integer').min(0, 'must be at least 0').optional(),
});
export const imageCreatedSchema = z
  .object({ name: z.string(), resourceType: z.string(), message: z.string(), image: z.string().optional() })
  .meta({ id: 'ImageCreated' });

export const imageShareSchema = z.object({
  targetWorkspace: z.string().min(1, 'is required').max(49, 'must be at most 49 characters'),
  targetAccountId: z.string().min(1, 'must not be empty').max(64).optional(),
});

export const PENDING_SHARE_STATUSES = ['pending', 'accepted', 'declined', 'expired'] as const;
export const pendingImageShareSchema = z
  .object({
    id: z.string(),
    resourceType: z.string(),
    imageName: z.string(),
    sourceWorkspace: z.string(),
    sourceAccountId: z.string(),
    targetWorkspace: z.string(),
    targetAccountId: z.string(),
    status: z.enum(PENDING_SHARE_STATUSES),
    createdAt: z.string(),
    createdBy: z.string(),
    expiresAt: z.string(),
  })
  .meta({ id: 'PendingImageShare' });
export type PendingImageShare = z.infer<typeof pendingImageShareSchema>;

export const imageShareEntrySchema = z
  .object({ targetWorkspace: z.string(), createdAt: z.string(), createdBy: z.string() })
  .meta({ id: 'ImageShare' });

const imageParams = z.object({ resourceType: resourceTypeSchema, imageName: z.string() });
const shareIdParams = z.object({ id: z.string() });

export const imageRoutes = {
  list: defineRoute({
    operationId: 'listImages',
    method: 'get',
    path: '/v0/images',
    summary: 'Images of the workspace, one per repository with its tags',
    tag: 'images',
    auth: 'workspace',
    query: listQuerySchema,
    response: imageSchema,
    paginated: true,
    bareList: true,
  }),
  create: defineRoute({
    operationId: 'createImage',
    method: 'post',
    path: '/v0/images',
    summary:
      'Register a prebuilt image under {resourceType}/{name} without creating a deployment; with ?upload=true, build one from code',
    tag: 'images',
    auth: 'workspace',
    query: uploadQuerySchema,
    body: imageCreateSchema,
    response: imageCreatedSchema,
    responseHeaders: UPLOAD_URL_HEADERS,
    variants: [
      {
        when: 'with `?upload=true`, `ImageUpload` answered by `ImageUploadStarted` and an upload URL',
        body: imageUploadSchema,
        response: imageUploadStartedSchema,
      },
    ],
    errors: [400],
  }),
  get: defineRoute({
    operationId: 'getImage',
    method: 'get',
    path: '/v0/images/{resourceType}/{imageName}',
    summary: 'Get an image',
    tag: 'images',
    auth: 'workspace',
    params: imageParams,
    response: imageSchema,
    errors: [400, 404],
  }),
  delete: defineRoute({
    operationId: 'deleteImage',
    method: 'delete',
    path: '/v0/images/{resourceType}/{imageName}',
    summary: 'Delete an image and its tags; answers with the deleted image',
    tag: 'images',
    auth: 'workspace',
    params: imageParams,
    response: imageSchema,
    errors: [400, 404],
  }),
  deleteTag: defineRoute({
    operationId: 'deleteImageTag',
    method: 'delete',
    path: '/v0/images/{resourceType}/{imageName}/tags/{tagName}',
    summary: 'Delete one tag; answers with the image',
    tag: 'images',
    auth: 'workspace',
    params: imageParams.extend({ tagName: tagNameSchema }),
    response: imageSchema,
    errors: [400, 404],
  }),
  listShares: defineRoute({
    operationId: 'listImageShares',
    method: 'get',
    path: '/v0/images/{resourceType}/{imageName}/share',
    summary: 'Workspaces this image is shared with',
    tag: 'images',
    auth: 'workspace',
    params: imageParams,
    response: z.array(imageShareEntrySchema),
    errors: [400, 404],
  }),
  share: defineRoute({
    operationId: 'shareImage',
    method: 'post',
    path: '/v0/images/{resourceType}/{imageName}/share',
    summary:
      'Share an image: same account → applied at once (200, the shared image); another account → a pending share (202) the target accepts or declines',
    description:
      'A 200 answers with the image object; a cross-account share answers 202 with a `PendingImageShare` (spec Management API rules 1-3).',
    tag: 'images',
    auth: 'workspace',
    role: 'admin',
    params: imageParams,
    body: imageShareSchema,
    response: z.union([imageSchema, pendingImageShareSchema]),
    errors: [400, 403, 404, 409],
  }),
  unshare: defineRoute({
    operationId: 'unshareImage',
    method: 'delete',
    path: '/v0/images/{resourceType}/{imageName}/share/{targetWorkspace}',
    summary: 'Stop sharing an image with a workspace (removes the copy there)',
    tag: 'images',
    auth: 'workspace',
    role: 'admin',
    params: imageParams.extend({ targetWorkspace: z.string() }),
    response: z.array(imageShareEntrySchema),
    errors: [400, 404],
  }),
  listPendingShares: defineRoute({
    operationId: 'listPendingImageShares',
    method: 'get',
    path: '/v0/pending-image-shares',
    summary: 'Pending image shares into (incoming, default) or out of (outgoing) the workspace',
    tag: 'images',
    auth: 'workspace',
    query: z.object({
      direction: z
        .enum(['incoming', 'outgoing'], { error: 'must be one of incoming, outgoing' })
        .default('incoming'),
    }),
    response: z.array(pendingImageShareSchema),
  }),
  acceptPendingShare: defineRoute({
    operationId: 'acceptPendingImageShare',
    method: 'post',
    path: '/v0/pending-image-shares/{id}/accept',
    summary: 'Accept an incoming share (target workspace admins); `force` replaces an image of the same name',
    tag: 'images',
    auth: 'workspace',
    role: 'admin',
    params: shareIdParams,
    query: z.object({
      force: z
        .enum(['true', 'false'], { error: 'must be true or false' })
        .optional()
        .transform((v) => v === 'true'),
    }),
    response: imageSchema,
    errors: [403, 404, 409, 410],
  }),
  declinePendingShare: defineRoute({
    operationId: 'declinePendingImageShare',
    method: 'post',
    path: '/v0/pending-image-shares/{id}/decline',
    summary: 'Decline an incoming share (target workspace admins); 204',
    tag: 'images',
    auth: 'workspace',
    role: 'admin',
    params: shareIdParams,
    response: z.null(),
    successStatus: 204,
    errors: [403, 404],
  }),
};
