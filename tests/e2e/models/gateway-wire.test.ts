// End-to-end (issue 18), the gateway as its callers see it on the wire, on a platform of its own:
// a stream's head leaves with its first events, or at once while the provider thinks
// (exchange.ts); and the official `openai` Python client works unmodified. The adapters, usage,
// policies and errors are model-gateway.test.ts's.
import { execFile, spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { connect } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeHome, startPlatform, type RunningPlatform } from '../support/platform.js';
import { startFakeProviders, USAGE, type FakeProviders } from './fake-providers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// The official Python client is on PyPI, not in Debian: CI (npm and Debian packages only) has
// none, so that test runs where TARMAC_TEST_PYTHON (or python3) can import it, and says so otherwise.
const PYTHON = process.env.TARMAC_TEST_PYTHON ?? 'python3';
const noPythonClient =
  spawnSync(PYTHON, ['-c', 'import openai'], { stdio: 'ignore' }).status === 0
    ? undefined
    : `${PYTHON} cannot import the openai package (PyPI only; set TARMAC_TEST_PYTHON)`;

describe('model gateway callers on the wire', () => {
  let p: RunningPlatform;
  let fake: FakeProviders;
  let ws: string;

  beforeAll(async () => {
    fake = await startFakeProviders();
    p = await startPlatform({ env: { TARMAC_MODEL_UPSTREAM_ALLOW: '127.0.0.1/32' } });
    ws = p.credentials.workspace;
    const conn = await p.api(`/v0/integrations/connections?workspace=${ws}`, {
      method: 'POST',
      body: JSON.stringify({
        metadata: { name: 'e2e-openai-conn' },
        spec: {
          integration: 'openai',
          config: { baseUrl: `${fake.url}/v1` },
          secret: { OPENAI_API_KEY: 'sk-upstream-openai' },
        },
      }),
    });
    expect(conn.status).toBe(200);
    const model = await p.api(`/v0/models/e2e-openai?workspace=${ws}`, {
      method: 'PUT',
      body: JSON.stringify({
        metadata: { name: 'e2e-openai' },
        spec: {
          runtime: { type: 'openai', model: 'openai-upstream-model' },
          integrationConnections: ['e2e-openai-conn'],
        },
      }),
    });
    expect(model.status).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await p?.stop();
    if (p) removeHome(p.home);
    await fake?.close();
  });

  // exchange.ts: the head goes with the first events when they came together (one write, one
  // wake-up of the caller before its first token), and at once while the provider thinks.
  it('a stream head leaves with the first events, or at once when the provider makes the caller wait', async () => {
    const body = (content: string) =>
      JSON.stringify({ model: 'x', stream: true, messages: [{ role: 'user', content }] });
    const raw = (content: string) =>
      new Promise<string>((resolve, reject) => {
        const payload = body(content);
        const socket = connect(p.port, '127.0.0.1', () =>
          socket.write(
            `POST /${ws}/models/e2e-openai/chat/completions HTTP/1.1\r\nhost: x\r\n` +
              `authorization: Bearer ${p.credentials.apiKey}\r\ncontent-type: application/json\r\n` +
              `content-length: ${Buffer.byteLength(payload)}\r\nconnection: close\r\n\r\n${payload}`,
          ),
        );
        // The first read, kept; the rest read to the end (connection: close) so the call completes.
        let first: string | undefined;
        socket.on('data', (d: Buffer) => (first ??= d.toString()));
        socket.on('close', () => resolve(first ?? ''));
        socket.on('error', reject);
      });
    const together = await raw('Say hello');
    expect(together).toMatch(/^HTTP\/1\.1 200 /);
    expect(together).toContain('text/event-stream');
    expect(together).toContain('data: {'); // the first event in the same read as the head

    let ended: Promise<string> = Promise.resolve('');
    const head = new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: p.port,
          path: `/${ws}/models/e2e-openai/chat/completions`,
          method: 'POST',
          headers: { authorization: `Bearer ${p.credentials.apiKey}`, 'content-type': 'application/json' },
        },
        (res) => {
          ended = new Promise((done) => {
            let text = '';
            res.on('data', (d: Buffer) => (text += d.toString()));
            res.on('end', () => done(text));
          });
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(body('hold on'));
    });
    const waited = await Promise.race([
      head,
      sleep(5000).then(() => 'no head while the provider held its first event'),
    ]);
    expect(waited).toBe(200);
    expect(fake.release()).toBe(1);
    const rest = await ended;
    expect(rest).toContain('"content":"Hel"');
    expect(rest).toContain('data: [DONE]');
  });

  it.skipIf(noPythonClient !== undefined)(
    `the official openai Python client works unmodified${noPythonClient ? ` (skipped: ${noPythonClient})` : ''}`,
    async () => {
      const { stdout } = await promisify(execFile)(
        PYTHON,
        [new URL('./openai-python-client.py', import.meta.url).pathname],
        {
          env: {
            ...process.env,
            BASE_URL: `${p.credentials.runUrl}/${ws}/models/e2e-openai`,
            KEY: p.credentials.apiKey,
          },
          timeout: 60_000,
        },
      );
      const u = USAGE.openai;
      expect(stdout.trim().split('\n')).toEqual([
        `plain Hello from the fake provider ${u.prompt} ${u.completion}`,
        `stream Hello from the fake provider ${u.prompt} ${u.completion}`,
        'tool get_weather {"city":"Paris"}',
        'embeddings 3',
        'models e2e-openai',
        'bad-key 401',
      ]);
      expect(fake.seen.at(-1)?.headers.authorization).toBe('Bearer sk-upstream-openai');
    },
  );
});
