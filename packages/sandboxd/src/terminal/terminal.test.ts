import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { LIMITS } from '../http/limits.js';
import { call, startDaemon, type TestDaemon } from '../test-support/harness.js';
import type { PtyFactory } from './pty.js';

let t: TestDaemon;
beforeAll(async () => {
  t = await startDaemon();
});
afterAll(() => t.stop());

interface Conn {
  ws: WebSocket;
  output: () => string;
  errors: string[];
  waitFor(text: string, ms?: number): Promise<void>;
}

async function connect(query: string): Promise<Conn> {
  const ws = new WebSocket(`${t.base.replace('http', 'ws')}/terminal/ws?${query}`);
  let out = '';
  const errors: string[] = [];
  const waiters: (() => void)[] = [];
  ws.on('message', (raw) => {
    const m = JSON.parse(String(raw)) as { type: string; data: string };
    if (m.type === 'output') out += m.data;
    else errors.push(m.data);
    for (const w of waiters.splice(0)) w();
  });
  await once(ws, 'open');
  return {
    ws,
    output: () => out,
    errors,
    async waitFor(text, ms = 5000) {
      const end = Date.now() + ms;
      while (!out.includes(text)) {
        if (Date.now() > end) throw new Error(`no "${text}" in terminal output: ${JSON.stringify(out)}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 100);
        });
      }
    },
  };
}

const input = (c: Conn, data: string): void => c.ws.send(JSON.stringify({ type: 'input', data }));

describe('GET /terminal/ws (reference §1.6)', () => {
  it('runs a real PTY: typed commands produce output, in the working directory, with a TTY', async () => {
    const c = await connect('sessionId=s1&cols=100&rows=30&shell=/bin/sh');
    input(c, 'echo "sum=$((40+2))"; pwd; test -t 0 && echo is-a-tty; stty size\n');
    await c.waitFor('sum=42');
    await c.waitFor('is-a-tty');
    await c.waitFor('30 100');
    expect(c.output()).toContain(t.wd);
    c.ws.close();
  });

  it('keeps the session across reconnects: replays the buffer, keeps shell state, resizes', async () => {
    const a = await connect('sessionId=keep&shell=/bin/sh');
    input(a, 'MARK=persisted; echo first-$MARK\n');
    await a.waitFor('first-persisted');
    a.ws.close();
    await once(a.ws, 'close');
    const b = await connect('sessionId=keep&shell=/bin/sh&cols=120&rows=40');
    await b.waitFor('first-persisted'); // replayed
    input(b, 'echo again-$MARK; stty size\n');
    await b.waitFor('again-persisted');
    await b.waitFor('40 120');
    b.ws.send(JSON.stringify({ type: 'resize', cols: 90, rows: 20 }));
    input(b, 'stty size\n');
    await b.waitFor('20 90');
    b.ws.close();
  });

  it('answers an error message to invalid input, and closes when the shell exits', async () => {
    const c = await connect('sessionId=bye&shell=/bin/sh');
    c.ws.send('not json');
    c.ws.send(JSON.stringify({ type: 'resize', cols: 0 }));
    await new Promise((r) => setTimeout(r, 200));
    expect(c.errors).toHaveLength(2);
    input(c, 'exit\n');
    const [code] = (await once(c.ws, 'close')) as [number];
    expect(code).toBe(1000);
  });

  it('refuses other paths and a missing working directory; serves GET /terminal', async () => {
    const bad = new WebSocket(`${t.base.replace('http', 'ws')}/terminal/ws?workingDir=nope`);
    const [, res] = (await once(bad, 'unexpected-response')) as [unknown, { statusCode: number }];
    expect(res.statusCode).toBe(400);
    const page = await fetch(`${t.base}/terminal`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('/terminal/ws');
  });

  it('is off when disabled', async () => {
    const d = await startDaemon({ terminalDisabled: true });
    try {
      expect((await call(d.base, 'GET', '/terminal')).status).toBe(404);
      const ws = new WebSocket(`${d.base.replace('http', 'ws')}/terminal/ws`);
      const [, res] = (await once(ws, 'unexpected-response')) as [unknown, { statusCode: number }];
      expect(res.statusCode).toBe(404);
    } finally {
      await d.stop();
    }
  });
});

describe('terminal bounds (issue 19 item 6)', () => {
  it(`refuses a session past ${LIMITS.terminalSessions}, and a message over the size cap closes only that socket`, async () => {
    // PTYs that cost nothing, so the cap can be reached.
    const fake: PtyFactory = () => ({
      pid: 1,
      onData: () => undefined,
      onExit: () => undefined,
      write: () => undefined,
      resize: () => undefined,
      kill: () => undefined,
    });
    const d = await startDaemon({}, { ptyFactory: fake });
    try {
      const url = (q: string): string => `${d.base.replace('http', 'ws')}/terminal/ws?${q}`;
      const socks: WebSocket[] = [];
      for (let i = 0; i < LIMITS.terminalSessions; i++) {
        const ws = new WebSocket(url(`sessionId=cap-${i}`));
        await once(ws, 'open');
        socks.push(ws);
      }
      const extra = new WebSocket(url('sessionId=one-too-many'));
      const [msg] = (await once(extra, 'message')) as [Buffer];
      expect(JSON.parse(String(msg))).toEqual({
        type: 'error',
        data: `too many terminal sessions: the limit is ${LIMITS.terminalSessions}`,
      });
      const [code] = (await once(extra, 'close')) as [number];
      expect(code).toBe(1013);
      // An existing session can still be joined.
      const again = new WebSocket(url('sessionId=cap-0'));
      await once(again, 'open');
      const big = socks[1]!;
      big.send('x'.repeat(LIMITS.terminalMessageBytes + 1));
      const [bigCode] = (await once(big, 'close')) as [number];
      expect(bigCode).toBe(1009); // message too big
      expect((await call(d.base, 'GET', '/health')).status).toBe(200);
      for (const s of [...socks, again]) s.terminate();
    } finally {
      await d.stop();
    }
  });
});
