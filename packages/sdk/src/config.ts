import { TarmacConfigError } from './http/errors.js';

/**
 * Where the client finds its settings, highest first: explicit arguments, then the environment
 * (`TARMAC_API_URL`, `TARMAC_RUN_URL`, `TARMAC_WORKSPACE`, `TARMAC_API_KEY`,
 * `TARMAC_CLIENT_CREDENTIALS` = base64 of `id:secret`), then the credentials file
 * (`$TARMAC_HOME/credentials.json`). This module only merges: reading env and files is the
 * caller's job (`@tarmac/sdk/node` does it), so it runs in browsers too.
 */
export interface CredentialsFile {
  apiUrl?: string;
  runUrl?: string;
  workspace?: string;
  accountId?: string;
  apiKey?: string;
  clientId?: string;
  clientSecret?: string;
}

export interface ConnectionSettings {
  apiUrl: string;
  /** Base of path-style sandbox URLs; defaults to `apiUrl`. */
  runUrl: string;
  workspace: string | undefined;
  accountId: string | undefined;
  apiKey: string | undefined;
  clientId: string | undefined;
  clientSecret: string | undefined;
}

export interface ConfigSources {
  args?: Partial<CredentialsFile>;
  env?: Record<string, string | undefined>;
  file?: CredentialsFile | undefined;
}

function decodeClientCredentials(value: string | undefined): { id?: string; secret?: string } {
  if (!value) return {};
  const text = atob(value.trim());
  const colon = text.indexOf(':');
  if (colon < 1)
    throw new TarmacConfigError('TARMAC_CLIENT_CREDENTIALS must be base64 of "client_id:client_secret"');
  return { id: text.slice(0, colon), secret: text.slice(colon + 1) };
}

const trimSlash = (url: string) => url.replace(/\/+$/, '');

export function resolveSettings({ args = {}, env = {}, file = {} }: ConfigSources): ConnectionSettings {
  const client = decodeClientCredentials(env.TARMAC_CLIENT_CREDENTIALS);
  const first = (...values: (string | undefined)[]) => values.find((v) => v !== undefined && v !== '');
  const apiUrl = first(args.apiUrl, env.TARMAC_API_URL, file.apiUrl);
  if (!apiUrl) {
    throw new TarmacConfigError(
      'no API URL: pass apiUrl, set TARMAC_API_URL, or run `tarmac login` to write credentials.json',
    );
  }
  // An explicitly chosen key outranks client credentials from a lower source, and vice versa.
  const apiKey = first(args.apiKey, env.TARMAC_API_KEY);
  const clientId = first(args.clientId, client.id);
  const useFile = apiKey === undefined && clientId === undefined;
  return {
    apiUrl: trimSlash(apiUrl),
    runUrl: trimSlash(first(args.runUrl, env.TARMAC_RUN_URL, file.runUrl, apiUrl) ?? apiUrl),
    workspace: first(args.workspace, env.TARMAC_WORKSPACE, file.workspace),
    accountId: first(args.accountId, file.accountId),
    apiKey: apiKey ?? (useFile ? file.apiKey : undefined),
    clientId: clientId ?? (useFile && !file.apiKey ? file.clientId : undefined),
    clientSecret:
      first(args.clientSecret, client.secret) ?? (useFile && !file.apiKey ? file.clientSecret : undefined),
  };
}
