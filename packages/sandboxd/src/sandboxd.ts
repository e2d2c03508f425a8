// The in-sandbox daemon, minimal edition: it answers GET /health so the platform knows the sandbox
// is up. The full sandbox API (filesystem, process, network, terminal) lands in a later issue.
//
// This file must stay a single module with node: imports only: `tsc` emits it as the one file
// (dist/sandboxd.js) that the engine bind-mounts read-only into every sandbox, where there is no
// node_modules. When it grows past one file, bundle it with esbuild instead.
import { createServer, type Server } from 'node:http';
import { pathToFileURL } from 'node:url';

export const DEFAULT_PORT = 8080;

/** Builds the HTTP server; does not listen. */
export function createSandboxd(): Server {
  return createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/health') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
  });
}

/** Parses `--port N` (the engine passes flags, not env, so nothing leaks into user processes). */
export function parsePort(argv: readonly string[]): number {
  const i = argv.indexOf('--port');
  const raw = i >= 0 ? argv[i + 1] : undefined;
  const port = raw === undefined ? DEFAULT_PORT : Number(raw);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new Error(`invalid --port ${raw}`);
  return port;
}

function main(): void {
  const server = createSandboxd();
  server.listen(parsePort(process.argv.slice(2)), '0.0.0.0');
  // SIGTERM from the engine's stop: close and exit 0 so a graceful stop is told apart from a kill.
  const stop = (): void => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

// Run only when executed as a program, never when imported (tests import createSandboxd).
const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) main();
