// `POST /_tarmac/claim` (issue 20, warm pool): the platform hands a pre-booted sandbox to the
// sandbox it becomes. `env` goes on top of the environment sandboxd booted with (HOSTNAME and the
// claimed sandbox's envs): every process started from then on sees what a sandbox booted for that
// name gives it. Accepted once, and only by a sandboxd that was started pooled.
import * as z from 'zod/mini';

export const sandboxdClaimSchema = z.object({
  env: z.record(z.string().check(z.minLength(1), z.maxLength(1024)), z.string()),
  /** Hostnames /mcp accepts from now on (issue 14 item 7): the claimed sandbox's own hosts. */
  mcpHosts: z.optional(z.array(z.string().check(z.minLength(1), z.maxLength(253))).check(z.maxLength(64))),
});
export type SandboxdClaim = z.infer<typeof sandboxdClaimSchema>;
