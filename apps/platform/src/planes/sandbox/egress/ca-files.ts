// The egress CA on disk (brief: "generate the CA key pair under TARMAC_HOME/keys (main.ts
// loads/creates it)"). Only main.ts calls this. The key stays in keys/ (0600); the public
// certificate and the trust bundle sandboxes mount (system roots + this CA) are written to
// egress/ so they can be bind-mounted read-only into every sandbox.
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { rootCertificates } from 'node:tls';
import { checkCaMaterial, createCaMaterial, type CaMaterial } from './certificate-authority.js';

export interface EgressCaFiles {
  ca: CaMaterial;
  /**
   * The CA certificate, then the operator's extra CAs (TARMAC_EXTRA_CA_CERTS, issue 14 item 10):
   * what node adds to its roots in a sandbox (NODE_EXTRA_CA_CERTS names one file).
   */
  certPath: string;
  /** System roots, the extra CAs and the CA: mounted over the sandbox's system trust store. */
  bundlePath: string;
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

async function writeAtomic(path: string, text: string, mode: number): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, text, { mode });
  await chmod(tmp, mode);
  await rename(tmp, path);
}

export async function loadOrCreateEgressCa(
  home: { root: string; keys: string },
  now: Date,
  extraCaPem: readonly string[] = [],
): Promise<EgressCaFiles> {
  await mkdir(home.keys, { recursive: true, mode: 0o700 });
  const keyPath = join(home.keys, 'egress-ca.key');
  const certKeyPath = join(home.keys, 'egress-ca.pem');
  const [keyPem, certPem] = [await readIfExists(keyPath), await readIfExists(certKeyPath)];
  let ca: CaMaterial;
  if (keyPem && certPem) {
    ca = { keyPem, certPem };
    checkCaMaterial(ca);
  } else {
    ca = createCaMaterial(now);
    // Certificate first: a crash between the two writes leaves no key without its certificate.
    await writeAtomic(certKeyPath, ca.certPem, 0o600);
    await writeAtomic(keyPath, ca.keyPem, 0o600);
  }
  const dir = join(home.root, 'egress');
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const certPath = join(dir, 'egress-ca.pem');
  const bundlePath = join(dir, 'ca-bundle.pem');
  // Rewritten at every start: the extra CAs are whatever the setting names now.
  const pem = (certs: readonly string[]) => certs.map((c) => c.trimEnd()).join('\n') + '\n';
  await writeAtomic(certPath, pem([ca.certPem, ...extraCaPem]), 0o644);
  await writeAtomic(bundlePath, pem([...rootCertificates, ...extraCaPem, ca.certPem]), 0o644);
  return { ca, certPath, bundlePath };
}
