import type { PlatformEnv } from './env-schema.js';
import { ConfigError } from './values.js';

/** The host's local CA directory (Debian: update-ca-certificates adds what is here to the bundle). */
export const HOST_LOCAL_CA_DIR = '/usr/local/share/ca-certificates';

/**
 * TARMAC_EXTRA_CA_CERTS resolved: the operator's list (every entry must exist), or the host's
 * defaults (used when present).
 */
export function extraCaSources(e: PlatformEnv): ExtraCaSources {
  const text = e.TARMAC_EXTRA_CA_CERTS?.trim();
  if (text === 'none') return { required: [], optional: [] };
  if (text) {
    const paths = text
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const relative = paths.find((x) => !x.startsWith('/'));
    if (relative !== undefined) {
      throw new ConfigError(`TARMAC_EXTRA_CA_CERTS: "${relative}" is not an absolute path`);
    }
    return { required: paths, optional: [] };
  }
  return {
    required: [],
    optional: [HOST_LOCAL_CA_DIR, ...(e.NODE_EXTRA_CA_CERTS ? [e.NODE_EXTRA_CA_CERTS] : [])],
  };
}

export interface ExtraCaSources {
  /** Paths named by the operator: missing or without a certificate is a ConfigError. */
  required: string[];
  /** The host's defaults: read when present. */
  optional: string[];
}
