import { spawn } from 'node:child_process';
import { readdir, readFile, readlink, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import type { CredentialsFile, Tarmac } from '@tarmac/sdk';
import {
  coreFromSettings,
  readCredentialsFile,
  tarmacHome,
  writeCredentialsFile,
} from '@tarmac/sdk/node/core';
import type { CliContext } from './context.js';
import { explain, formatError } from './errors.js';
import type { CliProgram } from './program-base.js';

/**
 * The `tarmac` process: the only CLI code that reads the environment and touches files, run
 * through cli-full.ts or cli-deploy.ts (main.ts picks one). Only cli-full.ts imports the full
 * SDK (`client`): `deploy` and `push` use `coreClient`, which builds no contract schema. `tarmac up` runs the platform server as a child process (apps never import each other: the CLI
 * only knows where the platform's entry point is installed, `platformEntry`).
 */
const VERSION = '0.1.0';

function up(
  entry: string,
  env: NodeJS.ProcessEnv,
  flags: { port?: string; host?: string; home?: string },
): Promise<number> {
  return new Promise<number>((resolve) => {
    const args = [entry];
    for (const [name, value] of Object.entries(flags))
      if (value !== undefined) args.push(`--${name}`, String(value));
    const child = spawn(process.execPath, args, { stdio: 'inherit', env });
    for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
      process.on(signal, () => child.kill(signal));
    }
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 + 15 : 1)));
  });
}

/** Reads one line from the terminal without echoing it; Ctrl-C aborts with 130. */
function readHidden(prompt: string): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    // Raw mode before the prompt: keys typed (or pasted) as soon as it shows are never echoed.
    process.stdin.setRawMode(true);
    process.stdin.resume();
    process.stderr.write(prompt);
    const onData = (chunk: Buffer) => {
      for (const char of chunk.toString('utf8')) {
        if (char === '\u0003') process.exit(130);
        if (char === '\r' || char === '\n') {
          process.stdin.off('data', onData);
          process.stdin.setRawMode(false);
          process.stdin.pause();
          process.stderr.write('\n');
          return resolve(text);
        }
        text = char === '\u007f' ? text.slice(0, -1) : text + char;
      }
    };
    process.stdin.on('data', onData);
  });
}

async function walkFolder(
  path: string,
): Promise<Array<{ path: string; mode: number; link?: string }> | undefined> {
  const info = await stat(path).catch(() => undefined);
  if (!info?.isDirectory()) return undefined;
  const found: Array<{ path: string; mode: number; link?: string }> = [];
  // Bounded: a deploy folder past 100k entries is a mistake (node_modules not ignored).
  const walk = async (rel: string): Promise<void> => {
    for (const e of await readdir(join(path, rel), { withFileTypes: true })) {
      if (found.length > 100_000) throw new Error(`${path} has more than 100000 files`);
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (e.name !== '.git' && e.name !== 'node_modules') await walk(child);
      } else if (e.isSymbolicLink())
        found.push({ path: child, mode: 0o777, link: await readlink(join(path, child)) });
      else if (e.isFile()) found.push({ path: child, mode: (await stat(join(path, child))).mode });
    }
  };
  await walk('');
  return found;
}

/** `@tarmac/sdk/node`'s `fromSettings`: the full client (cli-full.ts passes it). */
export type FromSettings = (
  args: { workspace?: string | undefined; apiUrl?: string | undefined },
  env: Record<string, string | undefined>,
  file: CredentialsFile | undefined,
) => Tarmac | Promise<Tarmac>;

/** What main.ts hands over: the command line, the environment, where the platform is installed. */
export interface CliProcess {
  /** Without node and the script. */
  argv: string[];
  env: NodeJS.ProcessEnv;
  /** Where `tarmac up` finds the platform's entry point. */
  platformEntry: () => string;
}

/** The context of this process; `fromSettings` makes the full SDK's clients (`client`, `clientFor`). */
export function nodeContext({ env, platformEntry }: CliProcess, fromSettings: FromSettings): CliContext {
  const home = tarmacHome(env, homedir());
  return {
    version: VERSION,
    env,
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    io: {
      readFile: async (path) => new Uint8Array(await readFile(path)),
      writeFile: (path, data) => writeFile(path, data),
      listDir: async (path) => {
        const info = await stat(path).catch(() => undefined);
        if (!info?.isDirectory()) return undefined;
        const entries = await readdir(path, { withFileTypes: true });
        return entries.filter((e) => e.isFile()).map((e) => join(path, e.name));
      },
      walkFolder,
      readSecret: async (prompt) => {
        if (process.stdin.isTTY) return readHidden(prompt);
        const lines = createInterface({ input: process.stdin, terminal: false });
        for await (const line of lines) {
          lines.close();
          return line;
        }
        return '';
      },
      readStdin: async () => {
        const chunks: Buffer[] = [];
        for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
        return Buffer.concat(chunks).toString('utf8');
      },
    },
    client: async (flags) =>
      fromSettings(
        { workspace: flags.workspace, apiUrl: flags.apiUrl },
        env,
        await readCredentialsFile(home),
      ),
    coreClient: async (flags) =>
      coreFromSettings(
        { workspace: flags.workspace, apiUrl: flags.apiUrl },
        env,
        await readCredentialsFile(home),
      ),
    // Explicit settings only: login must test exactly what it is about to save.
    clientFor: async (settings: CredentialsFile) => fromSettings(settings, {}, undefined),
    readCredentials: () => readCredentialsFile(home),
    saveCredentials: (credentials) => writeCredentialsFile(home, credentials),
    up: (flags) => up(platformEntry(), env, flags),
  };
}

/** Runs the command line with `program` and exits with its code. */
export function runCli(
  proc: CliProcess,
  program: (ctx: CliContext) => CliProgram,
  fromSettings: FromSettings,
): void {
  program(nodeContext(proc, fromSettings))
    .run(proc.argv)
    .then(
      (code) => process.exit(code),
      (error: unknown) => {
        const failure = explain('command failed', error);
        process.stderr.write(`${formatError(failure)}\n`);
        process.exit(failure.exitCode);
      },
    );
}
