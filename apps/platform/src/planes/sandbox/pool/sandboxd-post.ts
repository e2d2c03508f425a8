/**
 * The warm pool's calls to a member's sandboxd (packages/sandboxd claim.ts): `POST /_tarmac/warm`
 * before the freeze and `GET /health` to keep a hot member's connection open (hot-members.ts).
 * The claim itself sends nothing: sandboxd reads the boot env file the engine rewrote. node:http
 * rather than fetch so these go through the gateway's keep-alive agent (gateway/proxy.ts): the
 * connection they leave is the one the claimed sandbox's first request uses.
 */
import { request, type Agent } from 'node:http';

export const WARM_PATH = '/_tarmac/warm';
export const HEALTH_PATH = '/health';

export interface SandboxdPost {
  ip: string;
  path: string;
  /** The JSON body of a POST; without one, a GET. */
  payload?: object;
  headers: Record<string, string>;
  /** false: a connection of its own, closed after. */
  agent: Agent | false | undefined;
  timeoutMs: number;
}

/** Resolves when sandboxd answered 200; rejects with its status and message otherwise. */
export async function callSandboxd(o: SandboxdPost): Promise<void> {
  const body = o.payload === undefined ? undefined : JSON.stringify(o.payload);
  const headers =
    body === undefined
      ? o.headers
      : {
          ...o.headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
        };
  const method = body === undefined ? 'GET' : 'POST';
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request({ host: o.ip, port: 8080, path: o.path, method, headers, agent: o.agent }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.setTimeout(o.timeoutMs, () => req.destroy(new Error(`sandboxd did not answer ${o.path}`)));
    req.on('error', reject);
    req.end(body);
  });
  if (status !== 200) throw new Error(`sandboxd refused ${o.path}: ${status} ${text}`);
}
