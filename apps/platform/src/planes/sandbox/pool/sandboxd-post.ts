/**
 * The warm pool's two calls to a member's sandboxd (packages/sandboxd claim.ts): `POST
 * /_tarmac/warm` before the freeze and `POST /_tarmac/claim` at the claim. node:http rather than
 * fetch so the claim can go through the gateway's keep-alive agent (gateway/proxy.ts): the
 * connection it opens is the one the claimed sandbox's first request uses.
 */
import { request, type Agent } from 'node:http';

export const CLAIM_PATH = '/_tarmac/claim';
export const WARM_PATH = '/_tarmac/warm';

export interface SandboxdPost {
  ip: string;
  path: string;
  payload: object;
  headers: Record<string, string>;
  /** false: a connection of its own, closed after. */
  agent: Agent | false | undefined;
  timeoutMs: number;
}

/** Resolves when sandboxd answered 200; rejects with its status and message otherwise. */
export async function postToSandboxd(o: SandboxdPost): Promise<void> {
  const body = JSON.stringify(o.payload);
  const headers = {
    ...o.headers,
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
  };
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request(
      { host: o.ip, port: 8080, path: o.path, method: 'POST', headers, agent: o.agent },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      },
    );
    req.setTimeout(o.timeoutMs, () => req.destroy(new Error(`sandboxd did not answer ${o.path}`)));
    req.on('error', reject);
    req.end(body);
  });
  if (status !== 200) throw new Error(`sandboxd refused ${o.path}: ${status} ${text}`);
}
