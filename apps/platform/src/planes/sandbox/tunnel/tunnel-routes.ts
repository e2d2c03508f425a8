// The two tunnel routes of the sandbox API, answered by the platform's sandbox gateway before it
// proxies to sandboxd (tunnel-service.ts says why). Errors use the sandbox plane's `{error}`.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { TunnelError, type TunnelSandbox, type TunnelService } from './tunnel-service.js';

const MAX_BODY = 64 * 1024;

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new TunnelError(400, `body over ${MAX_BODY} bytes`));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null'));
      } catch {
        reject(new TunnelError(400, 'body must be JSON: {"config": "<base64>"}'));
      }
    });
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: object): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Handles the request when it is a tunnel route; false lets the gateway proxy it to sandboxd. */
export async function handleTunnelRoute(
  tunnels: TunnelService,
  req: IncomingMessage,
  res: ServerResponse,
  sandbox: TunnelSandbox,
  path: string,
): Promise<boolean> {
  const pathname = path.split('?')[0]?.replace(/\/+$/, '') ?? '';
  const route =
    req.method === 'DELETE' && pathname === '/network/tunnel'
      ? 'delete'
      : req.method === 'PUT' && pathname === '/network/tunnel/config'
        ? 'configure'
        : undefined;
  if (!route) return false;
  try {
    const result =
      route === 'delete'
        ? await tunnels.disconnect(sandbox)
        : await tunnels.configure(sandbox, await readJson(req));
    send(res, 200, result);
  } catch (err) {
    if (err instanceof TunnelError) send(res, err.status, { error: err.message });
    else
      send(res, 500, {
        error: `tunnel operation failed: ${err instanceof Error ? err.message : String(err)}`,
      });
  }
  return true;
}
