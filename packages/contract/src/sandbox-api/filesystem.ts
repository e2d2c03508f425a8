// Filesystem bodies of the sandbox API (reference sandbox-api.md §1.2; spec "Sandbox API" tree).
import * as z from 'zod/mini';

/** `permissions` is an octal string without a leading 0 ("644"); `lastModified` is RFC 3339. */
export const sandboxFileSchema = z.object({
  path: z.string(),
  name: z.string(),
  permissions: z.string(),
  size: z.number(),
  lastModified: z.string(),
  owner: z.string(),
  group: z.string(),
});
export type SandboxFile = z.infer<typeof sandboxFileSchema>;

export const sandboxFileWithContentSchema = z.extend(sandboxFileSchema, { content: z.string() });
export type SandboxFileWithContent = z.infer<typeof sandboxFileWithContentSchema>;

export const sandboxSubdirectorySchema = z.object({ name: z.string(), path: z.string() });

/** The directory tree: all four fields always present. */
export const sandboxDirectorySchema = z.object({
  name: z.string(),
  path: z.string(),
  files: z.array(sandboxFileSchema),
  subdirectories: z.array(sandboxSubdirectorySchema),
});
export type SandboxDirectory = z.infer<typeof sandboxDirectorySchema>;

/** Octal permissions as sent by clients: "644", "0644", "0o644". */
export const permissionsSchema = z.string().check(z.regex(/^(0o?)?[0-7]{3,4}$/, 'invalid permissions'));

export const fileRequestSchema = z.object({
  content: z.optional(z.string()),
  isDirectory: z.optional(z.boolean()),
  permissions: z.optional(permissionsSchema),
});
export type FileRequest = z.infer<typeof fileRequestSchema>;

export const treeRequestSchema = z.object({ files: z.record(z.string(), z.string()) });
export type TreeRequest = z.infer<typeof treeRequestSchema>;

/** One line of a `/watch/filesystem` stream; `path` is the parent directory. */
export const watchEventSchema = z.object({
  op: z.string(),
  name: z.string(),
  path: z.string(),
  error: z.nullable(z.string()),
});
export type WatchEvent = z.infer<typeof watchEventSchema>;

const entryType = z.enum(['file', 'directory']);

export const findResponseSchema = z.object({
  matches: z.array(z.object({ path: z.string(), type: entryType })),
  total: z.int(),
});
export type FindResponse = z.infer<typeof findResponseSchema>;

export const fuzzySearchResponseSchema = z.object({
  matches: z.array(z.object({ path: z.string(), score: z.number(), type: entryType })),
  total: z.int(),
});
export type FuzzySearchResponse = z.infer<typeof fuzzySearchResponseSchema>;

export const contentSearchResponseSchema = z.object({
  query: z.string(),
  matches: z.array(
    z.object({
      path: z.string(),
      line: z.int(),
      column: z.int(),
      text: z.string(),
      context: z.optional(z.string()),
    }),
  ),
  total: z.int(),
});
export type ContentSearchResponse = z.infer<typeof contentSearchResponseSchema>;

// S3-style multipart uploads (§1.2, "Multipart upload").
export const multipartInitiateRequestSchema = z.object({ permissions: z.optional(permissionsSchema) });
export const multipartInitiateResponseSchema = z.object({ uploadId: z.string(), path: z.string() });
export const multipartPartSchema = z.object({ partNumber: z.int(), etag: z.string(), size: z.int() });
const uploadedPartSchema = z.extend(multipartPartSchema, { uploadedAt: z.string() });
export const multipartCompleteRequestSchema = z.object({
  parts: z
    .array(z.object({ partNumber: z.int().check(z.minimum(1), z.maximum(10000)), etag: z.string() }))
    .check(z.minLength(1)),
});
export type MultipartCompleteRequest = z.infer<typeof multipartCompleteRequestSchema>;
export const multipartPartsResponseSchema = z.object({
  uploadId: z.string(),
  parts: z.array(uploadedPartSchema),
});
export const multipartUploadsResponseSchema = z.object({
  uploads: z.array(
    z.object({
      uploadId: z.string(),
      path: z.string(),
      permissions: z.int(),
      initiatedAt: z.string(),
      parts: z.record(z.string(), uploadedPartSchema),
    }),
  ),
});
