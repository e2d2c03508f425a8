// Terminal sessions (reference sandbox-api.md §1.6): one PTY per `sessionId`, surviving
// reconnects; a reconnect replays the buffered output (last 256 KiB) and resizes the terminal.
// A session ends when its shell exits.
import type { WebSocket } from 'ws';
import { terminalClientMessageSchema, type TerminalServerMessage } from '@tarmac/contract';
import type { Pty, PtyFactory, PtyOptions } from './pty.js';

const REPLAY_BYTES = 256 * 1024;

interface Session {
  pty: Pty;
  buffer: string;
  sockets: Set<WebSocket>;
}

export interface ConnectOptions extends PtyOptions {
  sessionId: string;
}

export class TerminalSessions {
  private readonly sessions = new Map<string, Session>();

  constructor(
    private readonly factory: PtyFactory,
    /** Sessions (a PTY and a shell each) at once; a new one past it is refused (issue 19 item 6). */
    private readonly maxSessions = Infinity,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  connect(ws: WebSocket, o: ConnectOptions): void {
    // A malformed frame or a reset socket is an 'error' event; unheard, it would be an uncaught
    // exception ending sandboxd and every process of the sandbox (issue 19 item 6). ws closes the
    // socket after it ('close' below forgets it).
    ws.on('error', () => undefined);
    const send = (m: TerminalServerMessage): void => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(m));
    };
    let s = this.sessions.get(o.sessionId);
    if (s) {
      if (s.buffer !== '') send({ type: 'output', data: s.buffer });
      s.pty.resize(o.cols, o.rows);
    } else {
      if (this.sessions.size >= this.maxSessions) {
        send({ type: 'error', data: `too many terminal sessions: the limit is ${this.maxSessions}` });
        ws.close(1013);
        return;
      }
      try {
        s = this.create(o);
      } catch (err) {
        send({ type: 'error', data: `cannot start terminal: ${(err as Error).message}` });
        ws.close(1011);
        return;
      }
    }
    const session = s;
    session.sockets.add(ws);
    ws.on('message', (raw) => {
      let msg: unknown;
      try {
        msg = JSON.parse(String(raw));
      } catch {
        return send({ type: 'error', data: 'invalid message: not JSON' });
      }
      const parsed = terminalClientMessageSchema.safeParse(msg);
      if (!parsed.success) return send({ type: 'error', data: 'invalid message: expected input or resize' });
      if (parsed.data.type === 'input') session.pty.write(parsed.data.data);
      else session.pty.resize(parsed.data.cols, parsed.data.rows);
    });
    ws.on('close', () => session.sockets.delete(ws));
  }

  private create(o: ConnectOptions): Session {
    const pty = this.factory(o);
    const s: Session = { pty, buffer: '', sockets: new Set() };
    pty.onData((data) => {
      s.buffer = (s.buffer + data).slice(-REPLAY_BYTES);
      const msg = JSON.stringify({ type: 'output', data } satisfies TerminalServerMessage);
      for (const ws of s.sockets) if (ws.readyState === ws.OPEN) ws.send(msg);
    });
    pty.onExit(() => {
      this.sessions.delete(o.sessionId);
      for (const ws of s.sockets) ws.close(1000, 'terminal exited');
    });
    this.sessions.set(o.sessionId, s);
    return s;
  }

  closeAll(): void {
    for (const s of this.sessions.values()) {
      for (const ws of s.sockets) ws.terminate();
      s.pty.kill();
    }
    this.sessions.clear();
  }
}
