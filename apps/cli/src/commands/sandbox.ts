import { Sandbox, type Tarmac } from '@tarmac/sdk';
import type { Command } from 'commander';
import type { CliContext, GlobalFlags } from '../context.js';
import { CliError, EXIT, explain } from '../errors.js';
import { parseFormat, render } from '../output.js';
import {
  basename,
  commandLine,
  parseCopyEndpoint,
  parseEnvPairs,
  parseMemory,
  parsePort,
  processExitCode,
} from '../sandbox-args.js';
import { startSpinner } from '../spinner.js';
import { connectTerminal } from '../terminal.js';
import { deleteResources, getResources } from './resources.js';
import { action, type Register } from './run.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** Waits for DEPLOYED with a spinner showing the current status. */
async function waitDeployed(ctx: CliContext, sandbox: Sandbox, timeoutMs: number): Promise<void> {
  const spinner = startSpinner(ctx.stderr, `Waiting for sandbox ${sandbox.name}`);
  // The first sandbox on a host waits for the base image build (~45 s): the platform says so in
  // an event; show it, and the time it has taken (issue 14 item 9).
  let buildingSince: number | undefined;
  try {
    await sandbox.waitFor('DEPLOYED', {
      timeoutMs,
      onStatus: (status) => {
        const building = sandbox.resource.events?.find((e) => e.type === 'BuildingImage');
        if (building && buildingSince === undefined) {
          buildingSince = Date.now();
          spinner.note(`${building.message}`);
        }
        const extra =
          buildingSince !== undefined && status === 'DEPLOYING'
            ? `, base image build ${Math.round((Date.now() - buildingSince) / 1000)} s`
            : '';
        spinner.update(`Waiting for sandbox ${sandbox.name} (${status}${extra})`);
      },
    });
    spinner.succeed(`Sandbox ${sandbox.name} is ready`);
  } catch (error) {
    spinner.fail();
    const failure = explain(`create sandbox ${sandbox.name}`, error);
    throw new CliError(
      failure.what,
      failure.why,
      failure.hint ?? `see its events with \`tarmac get sandbox ${sandbox.name} -o yaml\``,
      failure.exitCode,
    );
  }
}

async function open(
  ctx: CliContext,
  flags: GlobalFlags,
  name: string,
): Promise<{ client: Tarmac; sandbox: Sandbox }> {
  const client = await ctx.client(flags);
  return { client, sandbox: await Sandbox.get(name, client) };
}

/** `tarmac sandbox ...`: create, exec, connect, cp, logs, list, delete. */
export const registerSandbox: Register = (program, ctx, state) => {
  const sandbox: Command = program.command('sandbox').alias('sbx').description('Work with sandboxes');

  sandbox
    .command('create [name]')
    .description('Create a sandbox and wait until it is ready')
    .option('--image <image>', 'image reference')
    .option('--memory <size>', 'memory: MB, or a size such as 512m or 2g')
    .option('-p, --port <port>', 'port to expose (repeatable)', collect)
    .option('-e, --env <KEY=VALUE>', 'environment variable (repeatable)', collect)
    .option('--ttl <duration>', 'delete after this age, e.g. 30m, 24h')
    .option('--no-wait', 'return without waiting for DEPLOYED')
    .option('--timeout <seconds>', 'how long to wait', '180')
    .option('-o, --output <format>', 'table, json or yaml', 'table')
    .action(
      action(
        state,
        (name?: string) => `create sandbox${name ? ` ${name}` : ''}`,
        async (flags, name?: string) => {
          const format = parseFormat(flags.output as string | undefined);
          // Arguments are checked before anything is asked of the platform.
          const spec = {
            name,
            image: flags.image as string | undefined,
            memory: flags.memory !== undefined ? parseMemory(String(flags.memory)) : undefined,
            ports: ((flags.port as string[] | undefined) ?? []).map(parsePort),
            envs: parseEnvPairs((flags.env as string[] | undefined) ?? []),
            ttl: flags.ttl as string | undefined,
          };
          const client = await ctx.client(flags);
          const created = await Sandbox.create(spec, client);
          if (flags.wait !== false) await waitDeployed(ctx, created, Number(flags.timeout) * 1000);
          ctx.stdout.write(
            render(format, created.resource, () => `${created.name}\t${created.status}\t${created.url}\n`),
          );
        },
      ),
    );

  sandbox
    .command('exec <name> <command...>')
    .description(
      'Run a command in a sandbox, streaming its output; exits with its exit code. Use -- before the command.',
    )
    .option('-d, --workdir <dir>', 'working directory')
    .option('-e, --env <KEY=VALUE>', 'environment variable (repeatable)', collect)
    .option('--timeout <seconds>', 'give up waiting after this many seconds (the process keeps running)')
    .option('--name <name>', 'name the process (for `tarmac sandbox logs`)')
    .option('--detach', 'start in the background and print the process name')
    .action(
      action(
        state,
        (name: string) => `exec in sandbox ${name}`,
        async (flags, name: string, words: string[]) => {
          const { sandbox: sb } = await open(ctx, flags, name);
          const common = {
            command: commandLine(words),
            ...(flags.name ? { name: flags.name as string } : {}),
            ...(flags.workdir ? { workingDir: flags.workdir as string } : {}),
            ...(flags.env ? { env: parseEnvPairs(flags.env as string[]) } : {}),
          };
          if (flags.detach) {
            const started = await sb.process.exec(common);
            ctx.stdout.write(`${started.name}\n`);
            return;
          }
          const result = await sb.process.exec({
            ...common,
            waitForCompletion: true,
            ...(flags.timeout ? { timeout: Number(flags.timeout) } : {}),
            onStdout: (chunk) => ctx.stdout.write(chunk),
            onStderr: (chunk) => ctx.stderr.write(chunk),
          });
          return processExitCode(result);
        },
      ),
    );

  sandbox
    .command('connect <name>')
    .description('Open an interactive shell in a sandbox (exit the shell to leave)')
    .option('--shell <path>', 'shell to run')
    .option('--session <id>', 'terminal session to attach to', 'default')
    .action(
      action(
        state,
        (name: string) => `connect to sandbox ${name}`,
        async (flags, name: string) => {
          const { sandbox: sb } = await open(ctx, flags, name);
          return connectTerminal(ctx, sb, {
            shell: flags.shell as string | undefined,
            sessionId: flags.session as string,
          });
        },
      ),
    );

  sandbox
    .command('cp <source> <destination>')
    .description(
      'Copy a file into or out of a sandbox: `cp ./a.txt box:/tmp/` or `cp box:/etc/hosts ./hosts`',
    )
    .action(
      action(
        state,
        (s: string, d: string) => `copy ${s} to ${d}`,
        async (flags, source: string, destination: string) => {
          const from = parseCopyEndpoint(source);
          const to = parseCopyEndpoint(destination);
          if (Boolean(from.sandbox) === Boolean(to.sandbox)) {
            throw new CliError(
              `copy ${source} to ${destination}`,
              'exactly one side must be SANDBOX:PATH',
              'e.g. tarmac sandbox cp ./app.py box:/app/',
              EXIT.usage,
            );
          }
          if (to.sandbox) {
            const { sandbox: sb } = await open(ctx, flags, to.sandbox);
            const target = to.path.endsWith('/') ? `${to.path}${basename(from.path)}` : to.path;
            const data = await ctx.io.readFile(from.path);
            await sb.fs.upload(target, data);
            ctx.stdout.write(`${from.path} -> ${to.sandbox}:${target} (${data.byteLength} bytes)\n`);
          } else if (from.sandbox) {
            const { sandbox: sb } = await open(ctx, flags, from.sandbox);
            const data = await sb.fs.download(from.path);
            const isDir = to.path.endsWith('/') || (await ctx.io.listDir(to.path)) !== undefined;
            const target = isDir ? `${to.path.replace(/\/+$/, '')}/${basename(from.path)}` : to.path;
            await ctx.io.writeFile(target, data);
            ctx.stdout.write(`${from.sandbox}:${from.path} -> ${target} (${data.byteLength} bytes)\n`);
          }
        },
      ),
    );

  sandbox
    .command('logs <name> <process>')
    .description('Print the output of a process in a sandbox (by name or PID)')
    .option('-f, --follow', 'keep streaming until the process exits')
    .action(
      action(
        state,
        (name: string, p: string) => `logs of ${p} in sandbox ${name}`,
        async (flags, name: string, processName: string) => {
          const { sandbox: sb } = await open(ctx, flags, name);
          if (!flags.follow) {
            const logs = await sb.process.logs(processName, 'all');
            ctx.stdout.write(logs);
            return;
          }
          let failure: unknown;
          const stream = sb.process.streamLogs(processName, {
            onStdout: (c) => ctx.stdout.write(c),
            onStderr: (c) => ctx.stderr.write(c),
            onError: (e) => (failure = e),
          });
          await stream.done;
          if (failure) throw failure;
        },
      ),
    );

  sandbox
    .command('list')
    .alias('ls')
    .description('Same as `tarmac get sandboxes`')
    .option('-o, --output <format>', 'table, json or yaml', 'table')
    .action(
      action(
        state,
        () => 'list sandboxes',
        (flags) => getResources(ctx, flags, 'sandboxes', undefined),
      ),
    );

  sandbox
    .command('delete <names...>')
    .alias('rm')
    .description('Same as `tarmac delete sandboxes NAME...`')
    .action(
      action(
        state,
        (names: string[]) => `delete sandboxes ${names.join(' ')}`,
        (flags, names: string[]) => deleteResources(ctx, flags, 'sandboxes', names),
      ),
    );
};
