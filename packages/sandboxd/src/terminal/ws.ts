// GET /terminal/ws (reference sandbox-api.md §1.6): the HTTP upgrade handler. Query `cols` (80),
// `rows` (24), `shell`, `workingDir`, `sessionId` ("default").
import { existsSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { resolveUserPath, type PathContext } from '../fs/paths.js';
import { LIMITS } from '../http/limits.js';
import type { TerminalSessions } from './sessions.js';

export interface TerminalUpgradeOptions {
  ctx: PathContext;
  env: Record<string, string>;
  defaultShell: string;
  disabled: boolean;
}

const dim = (v: string | null, d: number): number => {
  const n = Number(v);
  return Number.isInteger(n) && n > 0 && n <= 1000 ? n : d;
};

/** Returns an `upgrade` listener for the node server. */
export function terminalUpgrade(sessions: TerminalSessions, o: TerminalUpgradeOptions) {
  const wss = new WebSocketServer({ noServer: true, maxPayload: LIMITS.terminalMessageBytes });
  const refuse = (socket: Duplex, status: string, error: string): void => {
    const body = JSON.stringify({ error });
    socket.end(
      `HTTP/1.1 ${status}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  };
  const handler = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    // Node drops its own error listener from a socket it hands to 'upgrade': a reset before ws
    // takes it (or after a refusal) must not be an uncaught exception (issue 19 item 6).
    socket.on('error', () => socket.destroy());
    const url = new URL(req.url ?? '/', 'http://sandbox');
    if (url.pathname !== '/terminal/ws' || o.disabled) return refuse(socket, '404 Not Found', 'not found');
    const q = url.searchParams;
    let cwd = o.ctx.workingDir;
    try {
      const wd = q.get('workingDir');
      if (wd) cwd = resolveUserPath(wd, o.ctx);
    } catch (err) {
      return refuse(socket, '400 Bad Request', (err as Error).message);
    }
    if (!existsSync(cwd))
      return refuse(socket, '400 Bad Request', `working directory does not exist: ${cwd}`);
    wss.handleUpgrade(req, socket, head, (ws) => {
      sessions.connect(ws, {
        sessionId: q.get('sessionId') || 'default',
        shell: q.get('shell') || o.defaultShell,
        cwd,
        env: o.env,
        cols: dim(q.get('cols'), 80),
        rows: dim(q.get('rows'), 24),
      });
    });
  };
  return Object.assign(handler, { close: () => wss.close() });
}
