// The sandbox API's multipart upload routes (routes.ts), under /filesystem-multipart.
import * as z from 'zod/mini';
import { sandboxSuccessSchema } from './common.js';
import {
  multipartCompleteRequestSchema,
  multipartInitiateRequestSchema,
  multipartInitiateResponseSchema,
  multipartPartSchema,
  multipartPartsResponseSchema,
  multipartUploadsResponseSchema,
} from './filesystem.js';
import type { SandboxRoute } from './route-spec.js';

export const multipartRoutes: readonly SandboxRoute[] = [
  {
    method: 'get',
    path: '/filesystem-multipart',
    operationId: 'listMultipartUploads',
    summary: 'Multipart uploads in progress',
    tag: 'filesystem',
    response: multipartUploadsResponseSchema,
  },
  {
    method: 'post',
    path: '/filesystem-multipart/initiate/{path}',
    operationId: 'initiateMultipartUpload',
    summary: 'Start a multipart upload to a path',
    tag: 'filesystem',
    body: multipartInitiateRequestSchema,
    response: multipartInitiateResponseSchema,
    errors: [400],
  },
  {
    method: 'put',
    path: '/filesystem-multipart/{id}/part',
    operationId: 'uploadPart',
    summary: 'Upload one part (raw bytes or multipart), ?partNumber=1..10000',
    tag: 'filesystem',
    query: z.object({ partNumber: z.string() }),
    multipart: true,
    response: multipartPartSchema,
    errors: [400, 404, 413],
  },
  {
    method: 'post',
    path: '/filesystem-multipart/{id}/complete',
    operationId: 'completeMultipartUpload',
    summary: 'Assemble the parts into the file',
    tag: 'filesystem',
    body: multipartCompleteRequestSchema,
    response: sandboxSuccessSchema,
    errors: [400, 404],
  },
  {
    method: 'delete',
    path: '/filesystem-multipart/{id}/abort',
    operationId: 'abortMultipartUpload',
    summary: 'Abort a multipart upload',
    tag: 'filesystem',
    response: sandboxSuccessSchema,
    errors: [404],
  },
  {
    method: 'get',
    path: '/filesystem-multipart/{id}/parts',
    operationId: 'listUploadedParts',
    summary: 'Parts uploaded so far',
    tag: 'filesystem',
    response: multipartPartsResponseSchema,
    errors: [404],
  },
];
