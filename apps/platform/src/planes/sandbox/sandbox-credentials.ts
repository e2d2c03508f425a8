/**
 * Per-sandbox secrets (issue 19 item 3): the platform must not trust a sandbox's IP address, which
 * a sandbox on the same bridge could borrow (forged ARP, spoofed source). Two secrets per sandbox:
 *
 *  - the **sandboxd token**: the gateway sends it to sandboxd on every request (header
 *    `x-tarmac-sandbox-token`, packages/sandboxd http/gateway-token.ts), and sandboxd answers
 *    nothing else. It reaches sandboxd through its environment (`TARMAC_SANDBOXD_TOKEN`), which
 *    sandboxd removes before it starts any process; it never goes to another port of the sandbox;
 *  - the **egress password**: the sandbox's processes present it to the egress proxy in
 *    `Proxy-Authorization` (it is in their `HTTP_PROXY` URL, `http://<record id>:<password>@…`),
 *    so the proxy picks a policy and secrets by proof, not by source address.
 *
 * Both are derived, not stored: HMAC-SHA256 under a key derived (HKDF) from the platform's
 * secrets key (`keys/secrets.key`, 0600, never leaves the host), over a purpose label and the
 * record id. So a restarted platform re-attaches to surviving sandboxes with no new state, a
 * sandbox re-created under the same name (new record id) gets new secrets, and knowing one
 * sandbox's secrets (its own root can read them) tells nothing about another's. Rotating
 * secrets.key would change every token; it already makes every sealed secret unreadable.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/** The header sandboxd checks; must match packages/sandboxd src/http/gateway-token.ts. */
export const SANDBOXD_TOKEN_HEADER = 'x-tarmac-sandbox-token';
/** The variable sandboxd reads it from; must match packages/sandboxd src/main.ts. */
export const SANDBOXD_TOKEN_ENV = 'TARMAC_SANDBOXD_TOKEN';
/** Not a secret: the hostnames sandboxd's /mcp accepts (packages/sandboxd mcp/host-guard.ts). */
export const SANDBOXD_MCP_HOSTS_ENV = 'TARMAC_SANDBOXD_MCP_HOSTS';

export class SandboxCredentials {
  private readonly key: Buffer;
  /** Derivation is ~2 µs, but the gateway asks on every request: remember recent answers. */
  private readonly cache = new Map<string, string>();

  constructor(secretsKey: Uint8Array) {
    this.key = Buffer.from(hkdfSync('sha256', secretsKey, 'tarmac', 'sandbox credentials v1', 32));
  }

  /** What the gateway sends to sandboxd (hex, 256 bits). */
  sandboxdToken(recordId: string): string {
    return this.derive('sandboxd', recordId);
  }

  /** The sandbox's password at the egress proxy (hex, 256 bits). */
  egressPassword(recordId: string): string {
    return this.derive('egress', recordId);
  }

  /** Whether `password` is the egress password of `recordId`, in constant time. */
  egressPasswordMatches(recordId: string, password: string): boolean {
    const expected = Buffer.from(this.egressPassword(recordId), 'utf8');
    const given = Buffer.from(password, 'utf8');
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  private derive(purpose: string, recordId: string): string {
    const k = `${purpose}\u0000${recordId}`;
    let v = this.cache.get(k);
    if (v === undefined) {
      v = createHmac('sha256', this.key).update(k).digest('hex');
      if (this.cache.size >= 10_000) this.cache.clear(); // bounded; a miss only costs a derivation
      this.cache.set(k, v);
    }
    return v;
  }
}
