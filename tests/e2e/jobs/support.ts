// Shared set-up of the job e2e tests (issue 17): the job built from examples/batch-job through
// the builds plane (deployBatchJob), a small busybox job image imported for the scenarios that need
// a shell (a docker-save archive through POST /v0/images/import), and a receiver the tasks report
// to — an HTTP server on the test bridge's gateway address that the egress proxy may reach
// (TARMAC_EGRESS_ALLOW_CIDRS). The receiver answers each task's /start with what it should do (ok,
// fail, sleep N), so one image serves every scenario, and records start/end times to observe
// parallelism from inside.
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { cliEnv, runCli } from '../cli/cli-runner.js';
import { REPO_ROOT, type RunningPlatform } from '../support/platform.js';
import { IMAGE_CACHE, json, missingBuildCapability, waitFor } from '../sandboxes/support.js';

/** What the job e2e tests need of the machine: the sandbox engine's tools and buildah (builds). */
export function missingJobCapability(): string | null {
  return missingBuildCapability('the job e2e builds examples/batch-job');
}

/**
 * The job built from examples/batch-job (issue 17: "a job built from an example folder") through
 * the builds plane, as a user does: `tarmac deploy examples/batch-job --name <name>` uploads the
 * folder (`?upload=true`), buildah builds its Dockerfile FROM tarmac/base (no network), and the
 * job record gets the image. `env` goes in with --env-file. Answers a clean-up of the built image.
 */
export async function deployBatchJob(
  p: RunningPlatform,
  name: string,
  env: Record<string, string>,
): Promise<() => void> {
  const work = mkdtempSync(join(tmpdir(), 'tarmac-jobdeploy-'));
  const envFile = join(work, 'job.env');
  writeFileSync(
    envFile,
    Object.entries(env)
      .map(([k, v]) => `${k}=${v}\n`)
      .join(''),
  );
  const cli = cliEnv({
    TARMAC_API_URL: p.url,
    TARMAC_API_KEY: p.credentials.apiKey,
    TARMAC_WORKSPACE: p.credentials.workspace,
    TARMAC_HOME: work,
  });
  const folder = join(REPO_ROOT, 'examples/batch-job');
  const r = await runCli(['deploy', folder, '--name', name, '--env-file', envFile], {
    env: cli,
    timeoutMs: 10 * 60_000,
  });
  expect(r.code, r.stderr + r.stdout).toBe(0);
  const job = await json<{ status: string; spec: { runtime: { image?: string } } }>(
    await p.api(`/v0/jobs/${name}`),
  );
  expect(job.spec.runtime.image).toMatch(new RegExp(`^jobs/${name}:b[a-z0-9]+$`));
  const ws = await json<{ id?: string }>(await p.api(`/v0/workspaces/${p.credentials.workspace}`));
  return () => {
    rmSync(work, { recursive: true, force: true });
    for (const d of readdirSync(IMAGE_CACHE)) {
      if (ws.id && decodeURIComponent(d).startsWith(`ws-${ws.id}/jobs/${name}:`))
        rmSync(join(IMAGE_CACHE, d), { recursive: true, force: true });
    }
  };
}

/** The task: fetch BL_EXECUTION_DATA_URL (directly: busybox wget ignores no_proxy), ask the receiver. */
const TASK_SCRIPT = `#!/bin/sh
k="\${BL_TASK_KEY:-TASK_INDEX}"
eval "i=\\$$k"
q="exec=$BL_EXECUTION_ID&task=$i&attempt=$BL_TASK_ATTEMPT&key=$k"
wget -Y off -q -O /tmp/data "$BL_EXECUTION_DATA_URL" || echo '{"error":"no data"}' > /tmp/data
act=$(wget -q -O - --header "X-Data-Url: $BL_EXECUTION_DATA_URL" --post-file /tmp/data "$RECEIVER/start?$q") || { echo "receiver unreachable"; exit 90; }
echo "task $i attempt $BL_TASK_ATTEMPT: $act"
case "$act" in
  fail) wget -q -O - --post-data x "$RECEIVER/end?$q" >/dev/null; exit 3;;
  sleep*) sleep "\${act#sleep }";;
esac
wget -q -O - --post-data x "$RECEIVER/end?$q" >/dev/null
echo "task $i done"
exit 0
`;

/** docker-save archive: /bin/busybox (static) and tool links, /task.sh; `/bin/sh cmd…` runs. */
export function jobImageArchive(work: string, ref: string, cmd: string[] = ['/task.sh']): string {
  const src = join(work, 'layer');
  mkdirSync(join(src, 'bin'), { recursive: true });
  mkdirSync(join(src, 'tmp'), { recursive: true });
  copyFileSync('/bin/busybox', join(src, 'bin/busybox'));
  for (const tool of ['sh', 'wget', 'sleep', 'echo', 'ls', 'dd', 'touch', 'cat', 'rm'])
    symlinkSync('busybox', join(src, 'bin', tool));
  writeFileSync(join(src, 'task.sh'), TASK_SCRIPT, { mode: 0o755 });
  const root = join(work, 'archive');
  mkdirSync(join(root, 'l1'), { recursive: true });
  execFileSync('tar', ['-cf', join(root, 'l1/layer.tar'), '-C', src, '.']);
  writeFileSync(
    join(root, 'config.json'),
    JSON.stringify({
      config: { Env: ['PATH=/bin'], WorkingDir: '/', Entrypoint: ['/bin/sh'], Cmd: cmd },
    }),
  );
  writeFileSync(
    join(root, 'manifest.json'),
    JSON.stringify([{ Config: 'config.json', RepoTags: [ref], Layers: ['l1/layer.tar'] }]),
  );
  const out = join(work, 'image.tar');
  execFileSync('tar', ['-cf', out, '-C', root, '.']);
  return out;
}

export async function importJobImage(p: RunningPlatform, ref: string, cmd?: string[]): Promise<() => void> {
  const work = mkdtempSync(join(tmpdir(), 'tarmac-jobimg-'));
  const res = await p.api(`/v0/images/import?ref=${encodeURIComponent(ref)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-tar' },
    body: new Uint8Array(readFileSync(jobImageArchive(work, ref, cmd))),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return () => {
    rmSync(work, { recursive: true, force: true });
    for (const d of readdirSync(IMAGE_CACHE)) {
      if (decodeURIComponent(d).endsWith(`/${ref}`))
        rmSync(join(IMAGE_CACHE, d), { recursive: true, force: true });
    }
  };
}

export interface TaskEvent {
  kind: 'start' | 'end';
  exec: string;
  task: number;
  attempt: number;
  key: string;
  at: number;
  data?: string;
  /** BL_EXECUTION_DATA_URL as the task saw it. */
  dataUrl?: string;
}

/** The HTTP receiver tasks report to; `plan` says what a task does on its attempt. */
export class Receiver {
  readonly events: TaskEvent[] = [];
  plan: (e: TaskEvent) => string = () => 'ok';
  private server: Server | undefined;
  url = '';

  async listen(host: string): Promise<void> {
    this.server = createServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://x');
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const kind = u.pathname === '/start' ? 'start' : u.pathname === '/end' ? 'end' : undefined;
        if (!kind) {
          res.writeHead(404).end();
          return;
        }
        const e: TaskEvent = {
          kind,
          exec: u.searchParams.get('exec') ?? '',
          task: Number(u.searchParams.get('task')),
          attempt: Number(u.searchParams.get('attempt')),
          key: u.searchParams.get('key') ?? '',
          at: Date.now(),
          ...(kind === 'start'
            ? {
                data: Buffer.concat(chunks).toString('utf8'),
                dataUrl: String(req.headers['x-data-url'] ?? ''),
              }
            : {}),
        };
        this.events.push(e);
        res.writeHead(200, { 'content-type': 'text/plain' }).end(kind === 'start' ? this.plan(e) : 'ok');
      });
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(0, host, () => resolve());
    });
    const a = this.server.address();
    this.url = `http://${host}:${typeof a === 'object' && a ? a.port : 0}`;
  }

  of(exec: string, kind?: TaskEvent['kind']): TaskEvent[] {
    return this.events.filter((e) => e.exec === exec && (kind === undefined || e.kind === kind));
  }

  /** Most tasks of `exec` between their start and end at once. */
  maxConcurrent(exec: string): number {
    const points = this.of(exec)
      .map((e) => ({ at: e.at, d: e.kind === 'start' ? 1 : -1 }))
      .sort((a, b) => a.at - b.at || a.d - b.d);
    let now = 0;
    let max = 0;
    for (const p of points) max = Math.max(max, (now += p.d));
    return max;
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

export interface ExecutionView {
  metadata: { id: string; job: string; createdAt: string; startedAt?: string; completedAt?: string };
  spec: { parallelism: number; tasks: unknown[] };
  status: string;
  stats: {
    total: number;
    success: number;
    failure: number;
    running: number;
    retried: number;
    cancelled: number;
  };
  tasks: { metadata: { name: string }; status: string; conditions: Record<string, unknown>[] }[];
}

export async function createJob(
  p: RunningPlatform,
  name: string,
  runtime: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<void> {
  const res = await p.api('/v0/jobs', {
    method: 'POST',
    body: JSON.stringify({ metadata: { name }, spec: { runtime: { memory: 128, ...runtime }, ...extra } }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
}

export async function startExecution(
  p: RunningPlatform,
  job: string,
  body: Record<string, unknown>,
): Promise<string> {
  const res = await p.api(`/v0/jobs/${job}/executions`, { method: 'POST', body: JSON.stringify(body) });
  const out = await json<{ id: string; executionId: string }>(res);
  expect(res.status, JSON.stringify(out)).toBe(200);
  return out.id;
}

export async function getExecution(p: RunningPlatform, job: string, id: string): Promise<ExecutionView> {
  const res = await p.api(`/v0/jobs/${job}/executions/${id}`);
  const body = await json<ExecutionView>(res);
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}

const TERMINAL = ['succeeded', 'failed', 'cancelled', 'timeout'];

export function waitExecution(
  p: RunningPlatform,
  job: string,
  id: string,
  ms = 120_000,
): Promise<ExecutionView> {
  return waitFor(
    `execution ${id} of ${job} to end`,
    async () => {
      const e = await getExecution(p, job, id);
      return TERMINAL.includes(e.status) ? e : undefined;
    },
    ms,
  );
}

/** stats always add up (issue 17). */
export function expectStatsAddUp(e: ExecutionView): void {
  const s = e.stats;
  const waiting = e.tasks.filter((t) => t.status === 'pending').length;
  expect(s.success + s.failure + s.cancelled + s.running + waiting).toBe(s.total);
}
