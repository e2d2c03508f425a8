import { parse } from 'smol-toml';
import { CliError, EXIT } from '../errors.js';

/**
 * A deployable folder's settings (issue 15 "tarmac deploy"): `tarmac.toml`, or `blaxel.toml` when
 * that is what the folder has (projects written for the public platform deploy unchanged). Read:
 * `type`, `name`, `[env]`, `[runtime]`, `[[triggers]]`, `public`, `policies`; `[build.args]` is
 * read by the platform from the uploaded file itself.
 */
export type DeployType = 'agent' | 'function' | 'job' | 'application';
export const KIND_OF: Record<DeployType, 'agents' | 'functions' | 'jobs' | 'applications'> = {
  agent: 'agents',
  function: 'functions',
  job: 'jobs',
  application: 'applications',
};

export interface Project {
  file: string | undefined;
  type: DeployType;
  name: string;
  env: Record<string, string>;
  runtime: Record<string, unknown>;
  triggers: unknown[] | undefined;
  public: boolean | undefined;
  policies: string[] | undefined;
}

export function readProject(
  files: { tarmac?: string | undefined; blaxel?: string | undefined },
  folderName: string,
  overrides: { name?: string | undefined; type?: string | undefined },
): Project {
  const [file, text] =
    files.tarmac !== undefined ? ['tarmac.toml', files.tarmac] : ['blaxel.toml', files.blaxel];
  let doc: Record<string, unknown> = {};
  if (text !== undefined) {
    try {
      doc = parse(text);
    } catch (err) {
      throw new CliError(`read ${file}`, (err as Error).message, undefined, EXIT.usage);
    }
  }
  const type = String(overrides.type ?? doc.type ?? 'agent');
  if (!(type in KIND_OF)) {
    throw new CliError(
      'deploy',
      `type "${type}" cannot be deployed from code here`,
      'use --type agent, function, job or application',
      EXIT.usage,
    );
  }
  const name = String(overrides.name ?? doc.name ?? folderName)
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  if (!name) throw new CliError('deploy', 'no name', 'pass --name or set name in tarmac.toml', EXIT.usage);
  const table = (v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  return {
    file: text !== undefined ? file : undefined,
    type: type as DeployType,
    name,
    env: Object.fromEntries(Object.entries(table(doc.env)).map(([k, v]) => [k, String(v)])),
    runtime: table(doc.runtime),
    triggers: Array.isArray(doc.triggers) ? doc.triggers : undefined,
    public: typeof doc.public === 'boolean' ? doc.public : undefined,
    policies: Array.isArray(doc.policies) ? doc.policies.map(String) : undefined,
  };
}

/** `KEY=VALUE` lines of an env file (comments and blank lines skipped, quotes removed). */
export function parseEnvLines(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq < 1) continue;
    let value = line.slice(eq + 1).trim();
    if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.endsWith(value[0])) {
      value = value.slice(1, -1);
    }
    out[
      line
        .slice(0, eq)
        .trim()
        .replace(/^export\s+/, '')
    ] = value;
  }
  return out;
}

/** The workload body sent with `?upload=true`. */
export function manifestOf(p: Project, env: Record<string, string>, secrets: Record<string, string>) {
  const envs = [
    ...Object.entries(env).map(([name, value]) => ({ name, value })),
    ...Object.entries(secrets).map(([name, value]) => ({ name, value, secret: true })),
  ];
  const metadata = { name: p.name, labels: { 'x-tarmac-deploy': 'true' } };
  // An application's spec is flat (reference §1.5: image, envs, memory, port), no runtime block;
  // `[runtime]` memory and port go there, and the build sets the image.
  if (p.type === 'application') {
    const pick = (k: string) => (typeof p.runtime[k] === 'number' ? { [k]: p.runtime[k] } : {});
    return { metadata, spec: { envs, ...pick('memory'), ...pick('port') } };
  }
  return {
    metadata,
    spec: {
      ...(p.public !== undefined ? { public: p.public } : {}),
      ...(p.policies ? { policies: p.policies } : {}),
      ...(p.triggers ? { triggers: p.triggers } : {}),
      runtime: { ...p.runtime, envs },
    },
  };
}
