// Who is asking the egress proxy (issue 19 item 3): a sandbox proves it with its own credentials in
// `Proxy-Authorization: Basic base64(<record id>:<password>)`, which proxy clients send when the
// proxy URL carries them (`HTTP_PROXY=http://<id>:<password>@<gateway>:3128`, sandbox-setup.ts;
// curl, python, apt, git and node's fetch proven in tests/e2e/boundary/gateway-egress.test.ts).
// The source address is no proof: a sandbox on the bridge could borrow another's (forged ARP,
// spoofed source), and a request header like X-Forwarded-For is whatever the client wrote.
// Missing or wrong credentials: 407, and no policy, no secrets.
import type { IncomingHttpHeaders } from 'node:http';

export interface ProxyCredentials {
  user: string;
  password: string;
}

/** RFC 9110 §11.7.1: what a 407 carries so clients know to send credentials. */
export const PROXY_AUTHENTICATE = { 'proxy-authenticate': 'Basic realm="tarmac egress"' } as const;

export const PROXY_AUTH_REQUIRED =
  "proxy authentication required: send this sandbox's own proxy credentials (they are in its HTTP_PROXY variable)";

/** The Basic credentials of a proxy request, or undefined when absent or malformed. */
export function proxyCredentials(headers: IncomingHttpHeaders): ProxyCredentials | undefined {
  const header = headers['proxy-authorization'];
  if (typeof header !== 'string') return undefined;
  const m = /^Basic\s+([A-Za-z0-9+/=]{1,1024})\s*$/i.exec(header);
  if (!m) return undefined;
  const text = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon <= 0) return undefined;
  return { user: text.slice(0, colon), password: text.slice(colon + 1) };
}
