// The sandbox data plane's two generic bodies (reference sandbox-api.md §1.1, spec "Sandbox API"
// rule 3). Every sandboxd error is `{error}`; success messages are `{message, path?}`.
//
// The sandbox-api schemas use `zod/mini` (same schemas and inference as classic zod, but
// tree-shakable): sandboxd bundles them, and classic zod would add ~440 KB to every sandbox start.
import * as z from 'zod/mini';

export const sandboxErrorSchema = z.object({ error: z.string() });
export type SandboxError = z.infer<typeof sandboxErrorSchema>;

export const sandboxSuccessSchema = z.object({ message: z.string(), path: z.optional(z.string()) });
export type SandboxSuccess = z.infer<typeof sandboxSuccessSchema>;

/** `GET /health` (§1.8), plus `keepAlive`: running keep-alive processes (the standby signal). */
export const sandboxHealthSchema = z.object({
  status: z.literal('ok'),
  version: z.string(),
  nodeVersion: z.string(),
  os: z.string(),
  arch: z.string(),
  startedAt: z.string(),
  uptime: z.string(),
  uptimeSeconds: z.number(),
  keepAlive: z.int(),
  processes: z.int(),
});
export type SandboxHealth = z.infer<typeof sandboxHealthSchema>;
