/**
 * The extra CAs the platform trusts beyond the public roots (issue 14 item 10): behind a
 * TLS-inspecting proxy every HTTPS connection out is signed by the proxy's CA, which the host
 * trusts (its local CA directory, NODE_EXTRA_CA_CERTS) but nothing the platform starts did. Read
 * once by main.ts from the paths config.ts resolved (TARMAC_EXTRA_CA_CERTS); the PEM text then
 * goes to the egress proxy's upstream verification, every sandbox's trust stores and builds
 * (compose.ts `trustedCaPem`).
 */
import { X509Certificate } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { rootCertificates } from 'node:tls';

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;
/** Files of a directory that hold certificates (update-ca-certificates reads *.crt). */
const CERT_FILE = /\.(crt|pem)$/;
/** Bounds: a CA directory is a handful of files; anything larger is a mistake, not trust. */
const MAX_FILES = 1000;
const MAX_FILE_BYTES = 1024 * 1024;

export class ExtraCaError extends Error {}

/** Every CERTIFICATE block of a PEM text, each checked to parse, normalised to end in "\n". */
export function pemCertificates(text: string, source: string): string[] {
  return [...text.matchAll(PEM_CERTIFICATE)].map((m) => {
    try {
      new X509Certificate(m[0]);
    } catch (err) {
      throw new ExtraCaError(`${source}: a certificate does not parse (${(err as Error).message})`);
    }
    return `${m[0]}\n`;
  });
}

async function filesOf(path: string): Promise<string[]> {
  const st = await stat(path);
  if (!st.isDirectory()) return [path];
  const entries = await readdir(path, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((e) => (e.isFile() || e.isSymbolicLink()) && CERT_FILE.test(e.name))
    .map((e) => join(e.parentPath, e.name))
    .sort();
  if (files.length > MAX_FILES) throw new ExtraCaError(`${path}: more than ${MAX_FILES} certificate files`);
  return files;
}

async function certificatesAt(path: string): Promise<string[]> {
  const out: string[] = [];
  for (const file of await filesOf(path)) {
    if ((await stat(file)).size > MAX_FILE_BYTES) throw new ExtraCaError(`${file}: larger than 1 MiB`);
    out.push(...pemCertificates(await readFile(file, 'utf8'), file));
  }
  return out;
}

/**
 * The certificates at `required` (each must exist and hold at least one) and at `optional` (the
 * host's defaults, skipped when absent), without duplicates, in order.
 */
export async function loadExtraCaCerts(sources: {
  required: readonly string[];
  optional: readonly string[];
}): Promise<string[]> {
  const all: string[] = [];
  for (const path of sources.required) {
    let found: string[];
    try {
      found = await certificatesAt(path);
    } catch (err) {
      if (err instanceof ExtraCaError) throw err;
      throw new ExtraCaError(`${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    if (found.length === 0) throw new ExtraCaError(`${path}: no PEM certificate in it`);
    all.push(...found);
  }
  for (const path of sources.optional) {
    // Absent on this host: nothing to trust. Present but broken is the operator's to see (exit 2).
    const found = await certificatesAt(path).catch((err: unknown) => {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err instanceof ExtraCaError ? err : new ExtraCaError(`${path}: ${(err as Error).message}`);
    });
    all.push(...found);
  }
  return beyondPublicRoots(all);
}

/**
 * Without duplicates and without node's bundled roots (a host's NODE_EXTRA_CA_CERTS is often the
 * whole system bundle): "extra" means what the public roots do not already cover.
 */
function beyondPublicRoots(certs: readonly string[]): string[] {
  // The DER in base64 is the identity: comparing it costs no parsing of node's ~140 roots.
  const body = (pem: string) => pem.replace(/-----[A-Z ]+-----|\s/g, '');
  const seen = new Set(rootCertificates.map(body));
  const out: string[] = [];
  for (const pem of certs) {
    const key = body(pem);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(pem);
  }
  return out;
}
