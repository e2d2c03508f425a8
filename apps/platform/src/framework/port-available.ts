import type { Server } from 'node:net';

/**
 * Whether `host:port` can be listened on right now, tried with a throw-away listener. `tarmac up`
 * asks before it starts anything (issue 14 item 9): a second `tarmac up` on a busy port used to
 * start a second egress proxy and the sandbox controllers on the same home, then die with a stack
 * trace. The check is advisory (another process may take the port in between); main.ts still
 * stops what it started when the real listen fails.
 */
export function portAvailable(createServer: () => Server, host: string, port: number): Promise<boolean> {
  if (port === 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

/** A start-up failure with a one-line reason for the operator (no stack trace). */
export class StartError extends Error {
  override readonly name = 'StartError';
}

export function portInUseMessage(host: string, port: number): string {
  return `port ${port} on ${host} is already in use (is another tarmac up running?); choose another with --port`;
}
