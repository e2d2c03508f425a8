// How the proxy answers when it does not forward: a JSON `{error}` body (the sandbox plane's error
// shape, spec "Errors": "Sandbox API errors are `{error: string}`") with 403 for a policy refusal,
// 400 for a malformed proxy request and 502 when the destination cannot be reached. On a CONNECT
// the answer is written raw on the socket, before any tunnel exists.
import type { ServerResponse } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

/** Marks responses made by the proxy itself, so clients and tests can tell them from upstream's. */
export const REFUSED_BY_HEADER = 'x-tarmac-egress';

export function refuseResponse(
  res: ServerResponse,
  status: number,
  error: string,
  headers: Readonly<Record<string, string>> = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify({ error });
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    [REFUSED_BY_HEADER]: status === 403 ? 'refused' : 'error',
    ...headers,
  });
  res.end(body);
}

export function refuseSocket(
  socket: Duplex,
  status: number,
  error: string,
  headers: Readonly<Record<string, string>> = {},
): void {
  const body = JSON.stringify({ error });
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}` +
      `${REFUSED_BY_HEADER}: ${status === 403 ? 'refused' : 'error'}\r\nconnection: close\r\n\r\n${body}`,
  );
}
