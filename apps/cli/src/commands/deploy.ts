import { NotFoundError, type BuildKind } from '@tarmac/sdk';
import type { CoreClient } from '@tarmac/sdk/node/core';
import type { CliContext } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import { selectFiles, zipFiles } from '../deploy/pack.js';
import { KIND_OF, manifestOf, parseEnvLines, readProject, type Project } from '../deploy/project.js';
import { action, type Register } from './run.js';

/**
 * `tarmac deploy [DIR]` and `tarmac push [DIR]` (issue 15; reference §3.3 "What bl deploy does"):
 * read tarmac.toml (or blaxel.toml), zip the folder with its excludes, upsert with
 * `?upload=true`, PUT the zip, stream the build log, and exit 0 only when the resource is DEPLOYED
 * (agents, functions and applications: the run plane answered on the new revision's replica) or
 * BUILT (jobs and `push`, which nothing serves); FAILED exits 1 with the build's or the replica's
 * message. `--no-wait` stops at BUILT for every kind.
 */
const DONE = new Set(['BUILT', 'DEPLOYED']);
/** Status polls when the build log cannot be followed; while it streams, its end says when to look. */
const POLL_MS = 500;
const STREAMING_POLL_MS = 5000;
const TIMEOUT_MS = 60 * 60_000;
/** Status polls while a built revision's replica starts (the run plane answers within seconds). */
const DEPLOY_POLL_MS = 250;

export const registerDeploy: Register = (program, ctx, state) => {
  program
    .command('deploy [dir]')
    .description('Build DIR (default .) on the platform and deploy it as an agent, function or job')
    .option('--name <name>', 'resource name (default: name in tarmac.toml, then the folder name)')
    .option('--type <type>', 'agent, function, job or application (default: type in tarmac.toml, then agent)')
    .option('--env-file <file>', 'KEY=VALUE lines added to the environment', collect, [])
    .option('--secret <K=V>', 'a secret environment variable (repeatable)', collect, [])
    .option('--skip-build', 'update the settings only; keep the image currently on the resource')
    .option('--dryrun', 'print the manifest and the files that would be uploaded; change nothing')
    .option('-y, --yes', 'do not ask for confirmation (deploy never asks; accepted for bl compatibility)')
    .option('--no-wait', 'exit once the image is BUILT, without waiting for a replica to answer (DEPLOYED)')
    .action(
      action(
        state,
        (dir?: string) => `deploy ${dir ?? '.'}`,
        async (flags, dir?: string) => deploy(ctx, flags, dir ?? '.', false),
      ),
    );
  program
    .command('push [dir]')
    .description('Build DIR (default .) into an image only (no deployment): POST /v0/images?upload=true')
    .option('--name <name>', 'image name (default: name in tarmac.toml, then the folder name)')
    .option('--type <type>', 'agent, function, job or application: the image repository (default agent)')
    .option('--dryrun', 'print the files that would be uploaded; change nothing')
    .action(
      action(
        state,
        (dir?: string) => `push ${dir ?? '.'}`,
        async (flags, dir?: string) => deploy(ctx, flags, dir ?? '.', true),
      ),
    );
};

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

async function readText(ctx: CliContext, path: string): Promise<string | undefined> {
  try {
    return Buffer.from(await ctx.io.readFile(path)).toString('utf8');
  } catch {
    return undefined;
  }
}

async function deploy(
  ctx: CliContext,
  flags: Record<string, unknown>,
  dir: string,
  imageOnly: boolean,
): Promise<number> {
  const out = (s: string) => ctx.stderr.write(`${s}\n`);
  const entries = await ctx.io.walkFolder?.(dir);
  if (!entries) throw new CliError('deploy', `${dir} is not a folder`, undefined, EXIT.usage);
  const project = readProject(
    { tarmac: await readText(ctx, `${dir}/tarmac.toml`), blaxel: await readText(ctx, `${dir}/blaxel.toml`) },
    dir.replace(/\/+$/, '').split('/').pop() || 'app',
    { name: flags.name as string | undefined, type: flags.type as string | undefined },
  );
  const env = { ...project.env };
  for (const file of (flags.envFile as string[] | undefined) ?? []) {
    const text = await readText(ctx, file);
    if (text === undefined)
      throw new CliError('deploy', `cannot read --env-file ${file}`, undefined, EXIT.usage);
    Object.assign(env, parseEnvLines(text));
  }
  const secrets = parseEnvLines(((flags.secret as string[] | undefined) ?? []).join('\n'));
  const manifest = manifestOf(project, env, secrets);
  const ignoreText =
    (await readText(ctx, `${dir}/.tarmacignore`)) ??
    (await readText(ctx, `${dir}/.blaxelignore`)) ??
    (await readText(ctx, `${dir}/.gitignore`));
  const files = selectFiles(entries, ignoreText);
  const kind = KIND_OF[project.type];
  if (flags.dryrun) {
    if (!imageOnly) ctx.stdout.write(`${JSON.stringify({ kind, ...manifest }, null, 2)}\n`);
    ctx.stdout.write(files.map((f) => `${f.path}\n`).join(''));
    return EXIT.ok;
  }
  const client = await ctx.coreClient(flags);
  const path = imageOnly ? `/v0/images/${kind}/${project.name}` : `/v0/${kind}/${project.name}`;
  if (flags.skipBuild) {
    const exists = !imageOnly && (await found(client, path));
    const current = exists
      ? await client.call<{ spec?: { runtime?: { image?: string }; image?: string } }>('GET', path)
      : undefined;
    const image = current?.spec?.runtime?.image ?? current?.spec?.image;
    if (!image)
      throw new CliError(
        'deploy',
        '--skip-build needs an image already on the resource',
        undefined,
        EXIT.usage,
      );
    const spec = manifest.spec as { runtime?: Record<string, unknown> };
    const body = {
      ...manifest,
      // Applications name the image at spec.image, the other kinds at spec.runtime.image.
      spec: spec.runtime ? { ...spec, runtime: { ...spec.runtime, image } } : { ...spec, image },
    };
    await client.call('PUT', path, { json: body });
    out(`Updated ${project.type} ${project.name} (image ${image} kept)`);
    return EXIT.ok;
  }
  const archive = await zipFiles(files, (p) => ctx.io.readFile(`${dir}/${p}`));
  out(`Uploading ${files.length} files (${archive.length} bytes) for ${project.type} ${project.name}`);
  const opened = imageOnly
    ? await client.builds.openImage(kind, project.name)
    : await openWorkload(client, kind, manifest);
  // The log is followed from now (the open made this build the record's latest), while the
  // archive goes up: its first lines are not waited for after the upload (issue 15 bench).
  const logs = client.builds.followLogs(path, (line) => ctx.stdout.write(`${line}\n`)).catch(() => undefined);
  await client.builds.upload(opened.uploadUrl, archive);
  const status = await waitForResult(client, path, imageOnly, logs);
  await Promise.race([logs, new Promise((r) => setTimeout(r, 2000))]);
  if (!DONE.has(status.status)) {
    throw new CliError(
      `build of ${project.type} ${project.name}`,
      status.message || 'FAILED',
      `tarmac logs: GET ${path}/logs`,
    );
  }
  out(`${status.status}: ${status.image ?? project.name}`);
  if (status.status === 'BUILT' && SERVED.has(kind) && !imageOnly && flags.wait !== false) {
    out(`Waiting for ${project.type} ${project.name} to answer (DEPLOYED)`);
    const served = await waitForDeployed(client, path);
    if (served.status !== 'DEPLOYED' && served.status !== 'DEACTIVATED')
      throw new CliError(
        `deploy of ${project.type} ${project.name}`,
        served.message || served.status,
        `tarmac logs ${project.type} ${project.name}`,
      );
    out(`${served.status}: ${project.type} ${project.name}`);
  }
  return EXIT.ok;
}

/** Kinds the run plane serves: a built image becomes a replica (issue 16). */
const SERVED = new Set(['agents', 'functions', 'applications']);

/**
 * After BUILT, until the run plane's verdict on the new revision: DEPLOYED (a replica answered),
 * FAILED (it crashed or never listened: its last log lines are the message), or DEACTIVATED (the
 * resource is disabled, so nothing is to answer).
 */
async function waitForDeployed(
  client: CoreClient,
  path: string,
): Promise<{ status: string; message: string }> {
  const deadline = Date.now() + TIMEOUT_MS;
  for (;;) {
    const r = await client.call<Watched>('GET', path);
    const status = r.status ?? '';
    if (status === 'DEPLOYED' || status === 'FAILED' || status === 'DEACTIVATED')
      return { status, message: r.events?.at(-1)?.message ?? '' };
    if (Date.now() > deadline)
      throw new CliError('deploy', 'timed out waiting for a replica to answer', undefined, EXIT.timeout);
    await new Promise((resolve) => setTimeout(resolve, DEPLOY_POLL_MS));
  }
}

/**
 * Replaces the workload (PUT, a redeploy: the usual case) or creates it when there is none (404,
 * then POST): one request for a redeploy instead of a look-up first.
 */
async function openWorkload(client: CoreClient, kind: BuildKind, manifest: { metadata: { name: string } }) {
  try {
    return await client.builds.openWorkload(kind, manifest, true);
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
    return client.builds.openWorkload(kind, manifest, false);
  }
}

async function found(client: CoreClient, path: string): Promise<boolean> {
  try {
    await client.call('GET', path);
    return true;
  } catch (err) {
    if (err instanceof NotFoundError) return false;
    throw err;
  }
}

interface Watched {
  status?: string;
  metadata?: { status?: string };
  spec?: { runtime?: { image?: string }; image?: string };
  events?: Array<{ status: string; message: string }>;
}

/**
 * Waits for BUILT/DEPLOYED or FAILED; only trusts a final state reached after BUILDING (bl does
 * the same). The build log ends when the build does, after its record is final, so while the log
 * streams the status is read when it ends (and every few seconds, in case); once it has ended, or
 * when it cannot be followed, every POLL_MS (issue 15 bench: no poll requests competing with the
 * build for the CPUs, and no wait for the next poll at the end).
 */
async function waitForResult(client: CoreClient, path: string, imageOnly: boolean, logEnd: Promise<unknown>) {
  let ended = false;
  const logDone = logEnd.then(() => (ended = true));
  const deadline = Date.now() + TIMEOUT_MS;
  let sawBuilding = false;
  for (let looked = false; ; looked = true) {
    if (!ended || looked) await nextLook(ended, logDone);
    const r = await client.call<Watched>('GET', path);
    const status = (imageOnly ? r.metadata?.status : r.status) ?? '';
    const events = (imageOnly ? (r.metadata as { events?: Watched['events'] })?.events : r.events) ?? [];
    if (status === 'BUILDING') sawBuilding = true;
    if (sawBuilding || events.some((e) => e.status === 'BUILDING')) sawBuilding = true;
    if (DONE.has(status) && sawBuilding)
      return { status, message: '', image: r.spec?.runtime?.image ?? r.spec?.image };
    if (status === 'FAILED') return { status, message: events.at(-1)?.message ?? '', image: undefined };
    if (Date.now() > deadline)
      throw new CliError('deploy', 'timed out waiting for the build', undefined, EXIT.timeout);
  }
}

/** Until the log ends (or STREAMING_POLL_MS) while it streams; POLL_MS after. */
function nextLook(ended: boolean, logDone: Promise<unknown>): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ended ? POLL_MS : STREAMING_POLL_MS);
    if (!ended)
      void logDone.then(() => {
        clearTimeout(timer);
        resolve();
      });
  });
}

export type { Project };
