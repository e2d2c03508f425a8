import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Closing the public listener on SIGINT/SIGTERM within ~2 s (issue 14 item 9). `server.close()`
 * waits for every connection, and Node counts one whose request headers are not complete yet as
 * busy (closeIdleConnections skips it) until `headersTimeout` (10 s). Here a connection is busy
 * only while it carries a request whose headers arrived and whose response has not closed: the
 * rest (idle keep-alive, half-sent headers, upgraded sockets) are closed at once; requests in flight
 * get `graceMs` to finish (platform-core "SIGTERM lets an in-flight request finish"), then go too.
 * Call right after creating the server, before it accepts connections.
 */
export function drainOnClose(server: Server, graceMs: number): () => Promise<void> {
  const open = new Set<Socket>();
  const busy = new Set<Socket>();
  let closing = false;
  server.on('connection', (socket: Socket) => {
    if (closing) return void socket.destroy();
    open.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      busy.delete(socket);
    });
  });
  server.on('request', (req, res) => {
    const socket = req.socket;
    busy.add(socket);
    // A response closes once: `on` spares `once`'s wrapper and removal on every request.
    res.on('close', () => {
      busy.delete(socket);
      if (closing) socket.destroy();
    });
  });
  const destroyNotBusy = () => {
    for (const socket of open) if (!busy.has(socket)) socket.destroy();
  };
  return () =>
    new Promise<void>((resolve) => {
      closing = true;
      const force = setTimeout(() => {
        for (const socket of open) socket.destroy();
      }, graceMs);
      force.unref();
      server.close(() => {
        clearTimeout(force);
        resolve();
      });
      destroyNotBusy();
    });
}
