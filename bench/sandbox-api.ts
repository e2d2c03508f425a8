// Benchmark: the sandbox API served by sandboxd (in-process on the host, a temp dir as its
// filesystem) against a bare node:http server doing the same work in the same run, so the ratio
// is sandboxd's own overhead (Hono routing, validation, log files, process table). Measured:
//   - exec round trip: POST /process {command:"echo hi", waitForCompletion:true} vs a bare server
//     that spawns `sh -c "echo hi"` and answers its stdout (and a bare HTTP echo, the floor);
//   - 1 MiB and 100 MiB write (multipart PUT /filesystem) and read (GET ?download=true) vs a bare
//     server streaming the body to a file and the file back;
//   - a 1,000-file tree write (PUT /filesystem/tree) vs a bare server writing the same files.
// Scenarios run interleaved. Prints medians with spreads (p10–p90, p99). Run from the repo root:
//   node --conditions source --import tsx bench/sandbox-api.ts     (EXEC_RUNS=300 by default)
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, createWriteStream, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { Agent, createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createSandboxd, defaultConfig } from '../packages/sandboxd/src/sandboxd.js';

const EXEC_RUNS = Number(process.env.EXEC_RUNS ?? 300);
const root = mkdtempSync(join(tmpdir(), 'sandbox-api-bench-'));
for (const d of ['sbx', 'bare', 'logs', 'tmp']) mkdirSync(join(root, d));
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

// --- servers -------------------------------------------------------------------------------
const sandboxd = createSandboxd(
  defaultConfig({
    workingDir: join(root, 'sbx'),
    logDir: join(root, 'logs'),
    tmpDir: join(root, 'tmp'),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  }),
);

const readBody = async (req: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
};

const bare = createServer(async (req, res) => {
  const url = req.url ?? '/';
  if (url === '/echo') {
    const body = await readBody(req);
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  } else if (url === '/exec') {
    const { command } = JSON.parse((await readBody(req)).toString()) as { command: string };
    const child = spawn('sh', ['-c', command], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    const [code] = (await once(child, 'close')) as [number];
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ stdout, exitCode: code }));
  } else if (url.startsWith('/file/') && req.method === 'PUT') {
    await pipeline(req, createWriteStream(join(root, 'bare', url.slice(6))));
    res.writeHead(200).end('{}');
  } else if (url.startsWith('/file/')) {
    const p = join(root, 'bare', url.slice(6));
    res.writeHead(200, { 'content-length': statSync(p).size });
    await pipeline(createReadStream(p), res);
  } else if (url.startsWith('/tree/')) {
    const { files } = JSON.parse((await readBody(req)).toString()) as { files: Record<string, string> };
    const base = join(root, 'bare', url.slice(6));
    for (const [rel, content] of Object.entries(files)) {
      const p = join(base, rel);
      await mkdir(dirname(p), { recursive: true });
      await writeFile(p, content);
    }
    res.writeHead(200).end('{}');
  }
});

async function listen(s: Server): Promise<number> {
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  return (s.address() as AddressInfo).port;
}
const sbxPort = await listen(sandboxd.server);
const barePort = await listen(bare);

// --- client ------------------------------------------------------------------------------
function send(
  port: number,
  method: string,
  path: string,
  body?: Buffer,
  headers: Record<string, string> = {},
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers: body ? { ...headers, 'content-length': body.length } : headers,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          res.statusCode === 200 || res.statusCode === 206
            ? resolve(Buffer.concat(chunks))
            : reject(
                new Error(
                  `${method} ${path}: ${res.statusCode} ${Buffer.concat(chunks).toString().slice(0, 200)}`,
                ),
              ),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function multipart(data: Buffer): { body: Buffer; type: string } {
  const b = `----bench${Date.now()}`;
  const head = Buffer.from(
    `--${b}\r\ncontent-disposition: form-data; name="file"; filename="f"\r\ncontent-type: application/octet-stream\r\n\r\n`,
  );
  return {
    body: Buffer.concat([head, data, Buffer.from(`\r\n--${b}--\r\n`)]),
    type: `multipart/form-data; boundary=${b}`,
  };
}

/**
 * Runs the scenarios interleaved (a, b, c, a, b, c, …; the order rotates every round) so that a
 * busy machine's noise lands on all of them alike, and returns each one's sorted timings.
 */
async function interleaved(
  runs: number,
  fns: ((i: number) => Promise<unknown>)[],
  warmup = Math.min(20, runs),
): Promise<number[][]> {
  for (let i = 0; i < warmup; i++) for (const fn of fns) await fn(-1 - i);
  const out: number[][] = fns.map(() => []);
  for (let i = 0; i < runs; i++) {
    for (let k = 0; k < fns.length; k++) {
      const j = (i + k) % fns.length;
      const t = performance.now();
      await (fns[j] as (i: number) => Promise<unknown>)(i);
      (out[j] as number[]).push(performance.now() - t);
    }
  }
  return out.map((xs) => xs.sort((a, b) => a - b));
}

const q = (xs: number[], p: number): number =>
  xs[Math.min(xs.length - 1, Math.floor(p * xs.length))] as number;
const ms = (x: number): string => `${x.toFixed(2)} ms`;
function report(name: string, xs: number[], extra = ''): void {
  console.log(
    `  ${name.padEnd(34)} median ${ms(q(xs, 0.5)).padStart(10)}  p10–p90 ${ms(q(xs, 0.1))}–${ms(q(xs, 0.9))}  p99 ${ms(q(xs, 0.99))}${extra}`,
  );
}
const mibps = (bytes: number, xs: number[]): string =>
  `  (${(bytes / 1048576 / (q(xs, 0.5) / 1000)).toFixed(0)} MiB/s)`;

// --- runs --------------------------------------------------------------------------------
console.log(`sandbox-api bench (node ${process.version}, ${EXEC_RUNS} exec runs)`);

const json = { 'content-type': 'application/json' };
const echoBody = Buffer.from(JSON.stringify({ command: 'echo hi' }));
const execBody = Buffer.from(JSON.stringify({ command: 'echo hi', waitForCompletion: true }));
const [floor, bareExec, sbxExec] = (await interleaved(EXEC_RUNS, [
  () => send(barePort, 'POST', '/echo', echoBody, json),
  () => send(barePort, 'POST', '/exec', echoBody, json),
  () => send(sbxPort, 'POST', '/process', execBody, json),
])) as [number[], number[], number[]];
console.log('exec round trip (echo hi, waitForCompletion)');
report('bare node:http echo (no spawn)', floor);
report('bare node:http + spawn sh -c', bareExec);
report('sandboxd POST /process', sbxExec, `   ratio ${(q(sbxExec, 0.5) / q(bareExec, 0.5)).toFixed(2)}x`);

for (const [label, size, runs] of [
  ['1 MiB', 1 << 20, 50],
  ['100 MiB', 100 << 20, 7],
] as const) {
  const data = Buffer.alloc(size, 97);
  const mp = multipart(data);
  const [bw, sw] = (await interleaved(
    runs,
    [
      () => send(barePort, 'PUT', '/file/f.bin', data),
      () => send(sbxPort, 'PUT', '/filesystem/f.bin', mp.body, { 'content-type': mp.type }),
    ],
    2,
  )) as [number[], number[]];
  const [br, sr] = (await interleaved(
    runs,
    [
      () => send(barePort, 'GET', '/file/f.bin'),
      () => send(sbxPort, 'GET', '/filesystem/f.bin?download=true'),
    ],
    2,
  )) as [number[], number[]];
  console.log(`${label} write / read (${runs} runs each)`);
  report('bare write (raw body → file)', bw, mibps(size, bw));
  report(
    'sandboxd write (multipart PUT)',
    sw,
    `${mibps(size, sw)} ratio ${(q(sw, 0.5) / q(bw, 0.5)).toFixed(2)}x`,
  );
  report('bare read (file → body)', br, mibps(size, br));
  report(
    'sandboxd read (GET download)',
    sr,
    `${mibps(size, sr)} ratio ${(q(sr, 0.5) / q(br, 0.5)).toFixed(2)}x`,
  );
}

const files: Record<string, string> = {};
for (let i = 0; i < 1000; i++) files[`d${i % 20}/f${i}.txt`] = `file ${i}\n`;
const treeBody = Buffer.from(JSON.stringify({ files }));
const [bt, st] = (await interleaved(
  15,
  [
    (i) => send(barePort, 'PUT', `/tree/t${i + 100}`, treeBody, json),
    (i) => send(sbxPort, 'PUT', `/filesystem/tree/t${i + 100}`, treeBody, json),
  ],
  2,
)) as [number[], number[]];
console.log('1,000-file tree write (15 runs each, fresh directory per run)');
report('bare node:http (parse + write files)', bt);
report('sandboxd PUT /filesystem/tree', st, `   ratio ${(q(st, 0.5) / q(bt, 0.5)).toFixed(2)}x`);

agent.destroy();
bare.close();
await sandboxd.close();
rmSync(root, { recursive: true, force: true });
