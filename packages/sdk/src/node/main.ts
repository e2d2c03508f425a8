// @tarmac/sdk/node: the Node composition root — the one SDK file that reads the environment and
// files. It configures clients from arguments, then env, then $TARMAC_HOME/credentials.json.
import { homedir } from 'node:os';
import type { ClientOptions } from '../client.js';
import type { CredentialsFile } from '../config.js';
import { setDefaultClient } from '../sandbox/default-client.js';
import { Tarmac } from '../tarmac.js';
import { readCredentialsFile, readCredentialsFileSync, tarmacHome } from './credentials.js';
import { nodeClientOptions } from './core.js';
import { nodeWebSocketFactory } from './websocket.js';

export { sandboxUrlFromEnv, nodeClientOptions, coreFromSettings, CoreClient } from './core.js';
export { httpFetch } from './http-fetch.js';
export { localhostFetch, isLocalhostName, loopbackLookup } from './localhost.js';
export { nodeWebSocketFactory } from './websocket.js';
export { readCredentialsFile, writeCredentialsFile, credentialsPath, tarmacHome } from './credentials.js';

export interface NodeClientOptions extends Partial<Omit<ClientOptions, 'apiUrl'>> {
  apiUrl?: string;
  /** Defaults to process.env. */
  env?: Record<string, string | undefined>;
  /** Defaults to $TARMAC_HOME or ~/.tarmac. */
  home?: string;
  /** Use this instead of reading credentials.json. */
  credentials?: CredentialsFile;
}

/** A client for Node: settings resolved from args, env and credentials.json; `*.localhost` works. */
export async function createClient(options: NodeClientOptions = {}): Promise<Tarmac> {
  const { env = process.env, home, credentials, ...args } = options;
  const file = credentials ?? (await readCredentialsFile(home ?? tarmacHome(env, homedir())));
  return fromSettings(args, env, file);
}

/** Synchronous variant for callers that already hold the credentials file's content. */
export function fromSettings(
  args: Partial<ClientOptions>,
  env: Record<string, string | undefined>,
  file: CredentialsFile | undefined,
): Tarmac {
  return new Tarmac({
    ...nodeClientOptions(args, env, file),
    webSocket: args.webSocket ?? nodeWebSocketFactory,
  });
}

/**
 * `Sandbox.create(...)` without a client uses this one, configured from env and credentials.json
 * on first use. Registering the factory does no I/O; the file is read when a call needs it.
 */
setDefaultClient(() => {
  const env = process.env;
  return fromSettings({}, env, readCredentialsFileSync(tarmacHome(env, homedir())));
});
