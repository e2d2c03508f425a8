import type { CredentialsFile, Tarmac } from '@tarmac/sdk';
import type { CoreClient } from '@tarmac/sdk/node/core';

/** Flags every command accepts. */
export interface GlobalFlags {
  workspace?: string;
  apiUrl?: string;
  output?: string;
}

/** File access the commands need, provided by main.ts (the only module that touches the disk). */
export interface CliIo {
  readFile(path: string): Promise<Uint8Array>;
  writeFile(path: string, data: Uint8Array): Promise<void>;
  /** Regular files directly under a directory, or undefined when `path` is not a directory. */
  listDir(path: string): Promise<string[] | undefined>;
  readStdin(): Promise<string>;
  /** Every file and symlink under `path` (relative, `/`-separated), or undefined when not a folder. */
  walkFolder?(path: string): Promise<Array<{ path: string; mode: number; link?: string }> | undefined>;
  /**
   * A secret line: on a terminal, `prompt` is shown and the answer is not echoed; from a pipe,
   * the first line, with no prompt.
   */
  readSecret(prompt: string): Promise<string>;
}

/** Everything a command may use; built by main.ts, faked by tests. */
export interface CliContext {
  version: string;
  /** The environment, for `${VAR}` interpolation in `apply`. */
  env: Record<string, string | undefined>;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  stdin: NodeJS.ReadStream;
  io: CliIo;
  /** A client from flags, then env, then credentials.json. */
  client(flags: GlobalFlags): Promise<Tarmac>;
  /**
   * The same settings as `client`, for the typed core and the builds API only: what `deploy`
   * and `push` need, without loading the SDK's resource wrappers (deploy-program.ts).
   */
  coreClient(flags: GlobalFlags): Promise<CoreClient>;
  /** A client for explicit settings (login checks them before saving). */
  clientFor(settings: CredentialsFile): Promise<Tarmac>;
  readCredentials(): Promise<CredentialsFile | undefined>;
  /** Writes credentials.json (mode 0600) and returns its path. */
  saveCredentials(credentials: CredentialsFile): Promise<string>;
  up(flags: { port?: string; host?: string; home?: string }): Promise<number>;
}
