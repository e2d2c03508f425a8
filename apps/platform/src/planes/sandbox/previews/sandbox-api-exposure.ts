/**
 * Which previews would expose the sandbox API itself (issue 19 item 11). sandboxd runs commands as
 * root; the platform reaches it at port 8080 with a per-sandbox token (../sandbox-credentials.ts),
 * and a preview of port 443 is a *session* (reference sandbox-api.md "Sessions", control-plane.md:
 * "Reserved sandbox ports are 80, 443 (sandbox API over HTTPS) and 8080 (sandbox API)") that the
 * preview gateway forwards to sandboxd with that token.
 *
 * - A **public** preview of 443 gave anyone on the internet root in the sandbox, no token asked:
 *   refused (400 naming `spec.port` at create/update; an older one is not served, 403).
 * - A **private** preview of 443 is kept: it is the reference's session, opened only by a preview
 *   token of that preview, which its owner hands out deliberately (and can expire or delete).
 * - A preview of **8080** (sandboxd's own port, public or private) would bypass the session rules
 *   and could only ever answer 401 (sandboxd wants the token, which a preview of a port never
 *   carries): refused the same way, with a message pointing to 443.
 */
import { SESSION_PORT } from './session-port.js';

/** sandboxd's port inside every sandbox (engine `--port`, SandboxGatewayDeps.sandboxPort default). */
export const SANDBOXD_PORT = 8080;

/** Why a preview of `port` must not exist, or undefined when it may. */
export function sandboxApiExposure(
  port: number,
  isPublic: boolean,
  sandboxdPort = SANDBOXD_PORT,
): string | undefined {
  if (port === SESSION_PORT && isPublic) {
    return `port ${SESSION_PORT} is the sandbox API (a session): it can only be previewed privately (public: false), where a preview token is required`;
  }
  if (port === sandboxdPort) {
    return `port ${sandboxdPort} is the sandbox API's own port; preview port ${SESSION_PORT} privately for a session`;
  }
  return undefined;
}
