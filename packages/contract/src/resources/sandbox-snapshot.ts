import { z } from 'zod';
import { nameSchema, timestampSchema } from '../common.js';
import { defineRoute } from '../route.js';
import { envSchema } from './sandbox.js';

/**
 * Sandbox snapshots and forks (reference control-plane §1.6 "Snapshots", `POST .../fork`).
 *
 * On this platform a snapshot is a FILESYSTEM snapshot: the sandbox's own writes on top of its
 * image (the root overlay's upper layer) and the contents of its attached volumes, copied while
 * the sandbox is frozen so the copy is consistent. Process memory and running processes are NOT
 * part of it: a fork boots fresh processes on the copied files. A fork is a new sandbox with its
 * own name, hostname and envs; it shares no writable state with its source (its volumes' contents
 * are copied into its own layer, at the same paths; it attaches no volume of the source).
 */

export const SNAPSHOT_STATUSES = ['pending', 'ready', 'failed'] as const;

export const SNAPSHOT_DESCRIPTION =
  'A filesystem snapshot: the sandbox’s writable layer and its volumes’ contents, copied while the ' +
  'sandbox is frozen. Process memory and running processes are not included.';

export const snapshotCreateSchema = z
  .object({
    name: nameSchema
      .optional()
      .meta({ description: 'Unique among the sandbox’s snapshots; generated when omitted.' }),
  })
  .meta({ id: 'SandboxSnapshotCreate' });
export type SnapshotCreate = z.infer<typeof snapshotCreateSchema>;

export const snapshotSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    sandboxName: z.string(),
    workspace: z.string(),
    status: z.enum(SNAPSHOT_STATUSES),
    createdAt: timestampSchema,
    createdBy: z.string(),
    sizeBytes: z.number().int().meta({ description: 'Bytes of the copy on disk.' }),
    contents: z.literal('filesystem').meta({ description: 'Files only: no process memory.' }),
    source: z.object({ name: z.string(), kind: z.literal('sandbox') }),
  })
  .meta({ id: 'SandboxSnapshot', description: SNAPSHOT_DESCRIPTION });
export type Snapshot = z.infer<typeof snapshotSchema>;

/** `POST /v0/snapshots` (the vendor SDK's `sandbox.snapshots.create`): the source named in the body. */
export const workspaceSnapshotCreateSchema = z
  .object({
    name: nameSchema.optional(),
    source: z.object({
      name: nameSchema,
      kind: z.literal('sandbox', { error: 'must be sandbox' }).optional(),
    }),
  })
  .meta({ id: 'SnapshotCreate' });
export type WorkspaceSnapshotCreate = z.infer<typeof workspaceSnapshotCreateSchema>;

export const forkRequestSchema = z
  .object({
    targetType: z.enum(['sandbox', 'application'], { error: 'must be sandbox or application' }),
    targetName: nameSchema,
    snapshotId: z.string().max(128).optional().meta({
      description:
        'Fork from this snapshot of the sandbox; omitted: a snapshot of the live state is taken first.',
    }),
    envs: z.array(envSchema).max(256, 'at most 256 variables').optional().meta({
      description: 'Variables of the fork on top of the source’s (same name: this value).',
    }),
    port: z.number().int().optional(),
    prefix: z.string().optional(),
    customDomain: z.string().optional(),
    traffic: z.number().int().min(0).max(100).optional(),
  })
  .meta({ id: 'SandboxForkRequest' });
export type ForkRequest = z.infer<typeof forkRequestSchema>;

export const forkResponseSchema = z
  .object({ name: z.string(), type: z.literal('sandbox'), snapshotId: z.string() })
  .meta({ id: 'SandboxForkResponse' });
export type ForkResponse = z.infer<typeof forkResponseSchema>;

const TAG = 'compute';
const sandboxParam = z.object({ sandboxName: z.string() });

export const snapshotRoutes = {
  listSnapshots: defineRoute({
    operationId: 'listSandboxSnapshots',
    method: 'get',
    path: '/v0/sandboxes/{sandboxName}/snapshots',
    summary: 'Snapshots of a sandbox (filesystem only: no process memory)',
    tag: TAG,
    auth: 'workspace',
    params: sandboxParam,
    response: z.array(snapshotSchema),
    errors: [404],
  }),
  createSnapshot: defineRoute({
    operationId: 'createSandboxSnapshot',
    method: 'post',
    path: '/v0/sandboxes/{sandboxName}/snapshots',
    summary: 'Snapshot a running sandbox’s files',
    description: `${SNAPSHOT_DESCRIPTION} The sandbox must be DEPLOYED; its processes pause for the copy.`,
    tag: TAG,
    auth: 'workspace',
    params: sandboxParam,
    body: snapshotCreateSchema.optional(),
    response: snapshotSchema,
    errors: [400, 404, 409],
  }),
  createWorkspaceSnapshot: defineRoute({
    operationId: 'createSnapshot',
    method: 'post',
    path: '/v0/snapshots',
    summary: 'Snapshot the sandbox named in source (as POST /v0/sandboxes/{name}/snapshots)',
    description: SNAPSHOT_DESCRIPTION,
    tag: TAG,
    auth: 'workspace',
    body: workspaceSnapshotCreateSchema,
    response: snapshotSchema,
    errors: [400, 404, 409],
  }),
  getSnapshot: defineRoute({
    operationId: 'getSnapshot',
    method: 'get',
    path: '/v0/snapshots/{snapshotId}',
    summary: 'Get a snapshot by id',
    tag: TAG,
    auth: 'workspace',
    params: z.object({ snapshotId: z.string() }),
    response: snapshotSchema,
    errors: [404],
  }),
  deleteSnapshot: defineRoute({
    operationId: 'deleteSnapshot',
    method: 'delete',
    path: '/v0/snapshots/{snapshotId}',
    summary: 'Delete a snapshot (204)',
    tag: TAG,
    auth: 'workspace',
    params: z.object({ snapshotId: z.string() }),
    response: z.null(),
    successStatus: 204,
    errors: [404],
  }),
  deleteSandboxSnapshot: defineRoute({
    operationId: 'deleteSandboxSnapshot',
    method: 'delete',
    path: '/v0/sandboxes/{sandboxName}/snapshots/{snapshotId}',
    summary: 'Delete a snapshot of this sandbox by id or name (204; the form the vendor SDK calls)',
    tag: TAG,
    auth: 'workspace',
    params: z.object({ sandboxName: z.string(), snapshotId: z.string() }),
    response: z.null(),
    successStatus: 204,
    errors: [404],
  }),
  forkSandbox: defineRoute({
    operationId: 'forkSandbox',
    method: 'post',
    path: '/v0/sandboxes/{sandboxName}/fork',
    summary: 'Create a new sandbox from a snapshot of this one, or from its live files',
    description:
      'The fork gets the snapshot’s files (not process memory), its own name, hostname and envs, and ' +
      'the source’s image and runtime settings; volumes are not shared — their contents are copied ' +
      'into the fork’s own layer at the same paths. Only targetType "sandbox" is supported here.',
    tag: TAG,
    auth: 'workspace',
    params: sandboxParam,
    body: forkRequestSchema,
    response: forkResponseSchema,
    errors: [400, 404, 409],
  }),
} as const;
