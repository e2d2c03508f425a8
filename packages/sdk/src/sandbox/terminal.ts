import type { TerminalClientMessage, TerminalServerMessage } from '@tarmac/contract';
import { TarmacConfigError, TarmacConnectionError } from '../http/errors.js';
import type { SandboxHttp } from './data-plane.js';
import { defaultWebSocketFactory, type WebSocketLike } from './websocket.js';

export interface TerminalOptions {
  cols?: number;
  rows?: number;
  /** Reconnecting with the same id replays the session's buffered output. */
  sessionId?: string;
  shell?: string;
  workingDir?: string;
}

/** An open PTY in the sandbox: JSON frames `{type: input|resize|output|error}` (reference §1.6, §5.5). */
export class TerminalConnection {
  private readonly dataListeners: ((data: string) => void)[] = [];
  private readonly closeListeners: ((reason: { code: number; reason: string }) => void)[] = [];
  private readonly errorListeners: ((message: string) => void)[] = [];
  /** Output that arrived before anyone listened (the replay sent right after connecting). */
  private pending: string[] = [];

  constructor(private readonly socket: WebSocketLike) {
    socket.addEventListener('message', (event) => {
      const text =
        typeof event.data === 'string' ? event.data : new TextDecoder().decode(event.data as Uint8Array);
      const message = JSON.parse(text) as TerminalServerMessage;
      if (message.type === 'error') for (const l of this.errorListeners) l(message.data);
      else if (this.dataListeners.length === 0) this.pending.push(message.data);
      else for (const l of this.dataListeners) l(message.data);
    });
    socket.addEventListener('close', (event) => {
      for (const l of this.closeListeners) l({ code: event.code, reason: event.reason });
    });
  }

  onData(listener: (data: string) => void): void {
    this.dataListeners.push(listener);
    const pending = this.pending;
    this.pending = [];
    for (const data of pending) listener(data);
  }
  onError(listener: (message: string) => void): void {
    this.errorListeners.push(listener);
  }
  /** The shell exited or the connection dropped. */
  onClose(listener: (reason: { code: number; reason: string }) => void): void {
    this.closeListeners.push(listener);
  }
  write(data: string): void {
    this.send({ type: 'input', data });
  }
  resize(cols: number, rows: number): void {
    this.send({ type: 'resize', cols, rows });
  }
  close(): void {
    this.socket.close(1000, 'client closed');
  }
  private send(message: TerminalClientMessage): void {
    if (this.socket.readyState === 1) this.socket.send(JSON.stringify(message));
  }
}

/** `sandbox.terminal`: opens interactive shells over the sandbox's websocket. */
export class SandboxTerminal {
  constructor(private readonly http: SandboxHttp) {}

  /** The websocket URL; the token rides in the query because browsers cannot set headers. */
  async url(options: TerminalOptions = {}): Promise<string> {
    const headers = await this.http.socketHeaders();
    const token = headers.authorization?.replace(/^Bearer /, '');
    const url = new URL(this.http.url('/terminal/ws'));
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    const q = url.searchParams;
    q.set('cols', String(options.cols ?? 80));
    q.set('rows', String(options.rows ?? 24));
    if (options.sessionId) q.set('sessionId', options.sessionId);
    if (options.shell) q.set('shell', options.shell);
    if (options.workingDir) q.set('workingDir', options.workingDir);
    if (token) q.set('token', token);
    if (headers['x-service-workspace']) q.set('workspace', headers['x-service-workspace']);
    return url.toString();
  }

  async connect(options: TerminalOptions = {}): Promise<TerminalConnection> {
    const factory = this.http.webSocket ?? defaultWebSocketFactory();
    if (!factory) {
      throw new TarmacConfigError('no WebSocket available: pass options.webSocket or use @tarmac/sdk/node');
    }
    const url = await this.url(options);
    const socket = factory(url, await this.http.socketHeaders());
    // Listen before the socket opens: the sandbox replays the session's screen at once.
    const connection = new TerminalConnection(socket);
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('open', () => resolve());
      socket.addEventListener('error', (event) =>
        reject(new TarmacConnectionError(`terminal connection failed: ${describe(event)}`, url, event)),
      );
      socket.addEventListener('close', (event) =>
        reject(new TarmacConnectionError(`terminal closed before opening (${event.code})`, url)),
      );
    });
    return connection;
  }
}

function describe(event: unknown): string {
  const inner = (event as { error?: unknown; message?: string }) ?? {};
  if (inner.error instanceof Error) return inner.error.message;
  return inner.message ?? 'websocket error';
}
