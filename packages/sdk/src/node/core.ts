// @tarmac/sdk/node/core: a Node client of the typed core only (`TarmacClient`: `call`, `request`,
// the builds API), configured like `@tarmac/sdk/node`'s (arguments, then env, then
// credentials.json), without the resource wrappers and so without the contract's route tables:
// importing it builds no schema. The CLI's deploy path uses it (issue 15 bench: `tarmac deploy`
// spent 0.1 s of a 0.6 s warm rebuild building every schema of the contract at import).
import { TarmacClient, type ClientOptions } from '../client.js';
import { resolveSettings, type CredentialsFile } from '../config.js';
import { BuildsApi } from '../management/builds.js';
import { httpFetch } from './http-fetch.js';
import { localhostFetch } from './localhost.js';

export { readCredentialsFile, tarmacHome, writeCredentialsFile } from './credentials.js';

/** `TARMAC_SANDBOX_<NAME>_URL` (name upper-cased, `-` as `_`) forces one sandbox's API base. */
export function sandboxUrlFromEnv(env: Record<string, string | undefined>) {
  return (name: string): string | undefined =>
    env[`TARMAC_SANDBOX_${name.toUpperCase().replace(/-/g, '_')}_URL`] || undefined;
}

/** The client options for Node: settings from args, env and credentials.json; `*.localhost` works. */
export function nodeClientOptions(
  args: Partial<ClientOptions>,
  env: Record<string, string | undefined>,
  file: CredentialsFile | undefined,
): ClientOptions {
  const settings = resolveSettings({ args, env, file });
  return {
    ...args,
    ...settings,
    fetch: args.fetch ?? localhostFetch(),
    sandboxUrl: args.sandboxUrl ?? sandboxUrlFromEnv(env),
  };
}

/**
 * The typed core with the builds API (code upload, build logs), from settings; its requests go
 * over node:http (`httpFetch`: no undici to load) unless `args.fetch` says otherwise.
 */
export class CoreClient extends TarmacClient {
  readonly builds = new BuildsApi(this);
}

export function coreFromSettings(
  args: Partial<ClientOptions>,
  env: Record<string, string | undefined>,
  file: CredentialsFile | undefined,
): CoreClient {
  return new CoreClient(nodeClientOptions({ ...args, fetch: args.fetch ?? httpFetch() }, env, file));
}
