/**
 * Which model a request to the run URL names (spec "Inference endpoints"; reference §"Global
 * gateway": `{run_url}/{ws}/models/{name}[/{subpath}]`, everything after the name forwarded).
 * The run plane shares the platform's listener (app.ts), so this matches the path only.
 */
import { RESERVED_WORKSPACE_NAMES } from '../../framework/reserved-names.js';

export interface ModelAddress {
  workspace: string;
  model: string;
  /** The rest of the path ('' for the model's own URL), always '' or starting with '/'. */
  path: string;
  /** The query string with its '?', or ''. */
  query: string;
}

const MODEL_PATH = /^\/([a-z0-9][a-z0-9-]*)\/models\/([a-z0-9][a-z0-9-]*)(\/[^?]*)?(\?.*)?$/;

export function modelAddress(url: string): ModelAddress | undefined {
  const m = MODEL_PATH.exec(url);
  if (!m || RESERVED_WORKSPACE_NAMES.has(m[1]!)) return undefined; // e.g. /v0/models/x (management)
  const path = m[3] ?? '';
  return { workspace: m[1]!, model: m[2]!, path: path === '/' ? '' : path, query: m[4] ?? '' };
}

/** What the gateway does with a sub-path: its own OpenAI routes, or the provider's API. */
export type Operation = 'chat' | 'list-models' | 'embeddings' | 'passthrough';

export function operationOf(method: string, path: string): Operation {
  const p = path.replace(/^\/v1(?=\/)/, ''); // OpenAI SDKs built on `{url}/v1` (reference §2.2)
  if (method === 'POST' && (p === '/chat/completions' || path === '')) return 'chat';
  if (method === 'GET' && p === '/models') return 'list-models';
  if (method === 'POST' && p === '/embeddings') return 'embeddings';
  return 'passthrough';
}
