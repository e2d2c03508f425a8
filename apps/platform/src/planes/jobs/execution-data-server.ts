/**
 * BL_EXECUTION_DATA_URL (reference §2.4): the JSON `{tasks:[...]}` a task reads its arguments
 * from. Served on the sandbox bridge's gateway address, on a port of the range every sandbox's
 * firewall opens toward the host (the egress proxy's shared range), so a task reaches it straight
 * from its own network namespace, not through the proxy. Authenticated by a capability in the
 * path: an HMAC of the execution row id under the platform's secret key (a task knows only its
 * own execution's URL; any other path or token is 404). Bounded: GET only, small connection cap,
 * short timeouts, and the answer is at most what a create accepted (MAX_EXECUTION_TASKS).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export interface ExecutionData {
  /** The tasks of an execution row, undefined when there is no such row. */
  tasksOf(rowId: string): Promise<unknown[] | undefined>;
}

export const DATA_SERVER_MAX_CONNECTIONS = 256;

export class ExecutionDataServer {
  private server: Server | undefined;
  private origin: string | undefined;

  constructor(
    private readonly key: Uint8Array,
    private readonly data: ExecutionData,
  ) {}

  /** Listens on `host` at the first free port of `ports`; resolves with the origin. */
  async listen(host: string, ports: readonly number[]): Promise<string> {
    const server = createServer((req, res) => void this.answer(req, res));
    server.maxConnections = DATA_SERVER_MAX_CONNECTIONS;
    server.headersTimeout = 10_000;
    server.requestTimeout = 15_000;
    server.keepAliveTimeout = 5_000;
    for (const port of ports) {
      try {
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(port, host, () => {
            server.off('error', reject);
            resolve();
          });
        });
        this.server = server;
        const address = server.address();
        this.origin = `http://${host}:${typeof address === 'object' && address ? address.port : port}`;
        return this.origin;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
      }
    }
    throw new Error(`no free port for the execution data server among ${ports.join(', ')}`);
  }

  /** The URL a task of this execution row gets, once listening. */
  urlFor(rowId: string): string | undefined {
    return this.origin ? `${this.origin}/executions/${rowId}/${this.token(rowId)}` : undefined;
  }

  close(): Promise<void> {
    const server = this.server;
    if (!server) return Promise.resolve();
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  }

  private token(rowId: string): string {
    return createHmac('sha256', this.key).update(`job-execution-data\u0000${rowId}`).digest('base64url');
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const m = /^\/executions\/([0-9a-f-]{36})\/([A-Za-z0-9_-]{43})$/.exec(req.url ?? '');
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'GET' || !m) return send(404, { error: 'not found' });
    const [, rowId = '', token = ''] = m;
    const want = Buffer.from(this.token(rowId));
    const got = Buffer.from(token);
    if (want.length !== got.length || !timingSafeEqual(want, got)) return send(404, { error: 'not found' });
    try {
      const tasks = await this.data.tasksOf(rowId);
      if (!tasks) return send(404, { error: 'not found' });
      send(200, { tasks });
    } catch {
      send(500, { error: 'could not read the execution' });
    }
  }
}
