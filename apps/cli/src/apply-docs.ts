import { parseAllDocuments } from 'yaml';
import type { ResourceDocument } from './resources.js';

/**
 * `${VAR}` and `${VAR:default}` from the environment (reference §3.1 apply). An unset variable
 * without a default is an error, not an empty string: a silently blank name or key is worse.
 */
export function interpolate(text: string, env: Record<string, string | undefined>): string {
  return text.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}/g,
    (_, name: string, fallback?: string) => {
      const value = env[name];
      if (value !== undefined && value !== '') return value;
      if (fallback !== undefined) return fallback;
      throw new Error(`\${${name}} is not set and has no default (write \${${name}:default})`);
    },
  );
}

/** Parses multi-document YAML into resource documents, naming the source of any problem. */
export function parseDocuments(text: string, source: string): ResourceDocument[] {
  const docs: ResourceDocument[] = [];
  for (const [index, doc] of parseAllDocuments(text).entries()) {
    const where = `${source} document ${index + 1}`;
    if (doc.errors.length) throw new Error(`${where}: ${doc.errors[0]?.message ?? 'invalid YAML'}`);
    const value = doc.toJS() as Partial<ResourceDocument> | null;
    if (value === null || value === undefined) continue; // an empty document between `---`s
    if (typeof value !== 'object' || typeof value.kind !== 'string')
      throw new Error(`${where}: missing "kind"`);
    if (typeof value.metadata?.name !== 'string' || !value.metadata.name) {
      throw new Error(`${where}: missing "metadata.name"`);
    }
    docs.push(value as ResourceDocument);
  }
  return docs;
}
