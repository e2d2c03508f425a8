// The platform's egress CA (brief: "TLS interception with a platform CA"). The proxy terminates
// TLS from the sandbox for routed destinations with a leaf certificate minted for the host on the
// fly and signed by this CA, which sandboxes trust. Keys are RSA made by node's crypto (fast,
// native); certificates are assembled and signed by node-forge. One leaf key pair serves every
// host (as mitmproxy does): only the signature differs, so minting a host costs one RSA signature.
import { createPrivateKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { createSecureContext, type SecureContext } from 'node:tls';
import forge from 'node-forge';

export interface CaMaterial {
  certPem: string;
  keyPem: string;
}

const DAY_MS = 86_400_000;

function newRsaKeyPem(): string {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
}

function serial(): string {
  // Positive: the top bit of the first byte cleared.
  const b = randomBytes(16);
  b[0] = (b[0] ?? 0) & 0x7f;
  return b.toString('hex');
}

/** A new self-signed CA valid for ten years. Pure computation; main.ts stores it under keys/. */
export function createCaMaterial(now: Date, commonName = 'Tarmac egress CA'): CaMaterial {
  const keyPem = newRsaKeyPem();
  const key = forge.pki.privateKeyFromPem(keyPem);
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  cert.serialNumber = serial();
  cert.validity.notBefore = new Date(now.getTime() - DAY_MS);
  cert.validity.notAfter = new Date(now.getTime() + 3650 * DAY_MS);
  const name = [
    { name: 'commonName', value: commonName },
    { name: 'organizationName', value: 'Tarmac' },
  ];
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(key, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem };
}

/** Throws when the PEM pair is not a CA certificate with its private key. */
export function checkCaMaterial(ca: CaMaterial): void {
  const cert = forge.pki.certificateFromPem(ca.certPem);
  const key = forge.pki.privateKeyFromPem(
    createPrivateKey(ca.keyPem).export({ type: 'pkcs1', format: 'pem' }).toString(),
  );
  const pub = cert.publicKey as forge.pki.rsa.PublicKey;
  if (pub.n.compareTo(key.n) !== 0) throw new Error('egress CA key does not match its certificate');
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** Mints and caches leaf certificates per host name (LRU by insertion refresh). */
export class LeafCertificates {
  private readonly caCert: forge.pki.Certificate;
  private readonly caKey: forge.pki.rsa.PrivateKey;
  private leafKeyPem: string | undefined;
  private leafPublicKey: forge.pki.rsa.PublicKey | undefined;
  private readonly cache = new Map<string, { context: SecureContext; expires: number }>();

  constructor(
    ca: CaMaterial,
    private readonly options: { now?: () => number; maxEntries?: number; validityDays?: number } = {},
  ) {
    this.caCert = forge.pki.certificateFromPem(ca.certPem);
    this.caKey = forge.pki.privateKeyFromPem(
      createPrivateKey(ca.keyPem).export({ type: 'pkcs1', format: 'pem' }).toString(),
    );
  }

  get size(): number {
    return this.cache.size;
  }

  /** The TLS context presenting a certificate for `host`, minted on first use. */
  contextFor(host: string): SecureContext {
    const now = (this.options.now ?? Date.now)();
    const hit = this.cache.get(host);
    if (hit && hit.expires > now + DAY_MS) {
      this.cache.delete(host);
      this.cache.set(host, hit);
      return hit.context;
    }
    const entry = this.mint(host, now);
    this.cache.set(host, entry);
    const max = this.options.maxEntries ?? 1000;
    while (this.cache.size > max) {
      const oldest = this.cache.keys().next().value;
      if (oldest === undefined) break;
      this.cache.delete(oldest);
    }
    return entry.context;
  }

  private mint(host: string, now: number): { context: SecureContext; expires: number } {
    if (!this.leafKeyPem || !this.leafPublicKey) {
      this.leafKeyPem = newRsaKeyPem();
      const k = forge.pki.privateKeyFromPem(this.leafKeyPem);
      this.leafPublicKey = forge.pki.setRsaPublicKey(k.n, k.e);
    }
    const expires = now + (this.options.validityDays ?? 30) * DAY_MS;
    const cert = forge.pki.createCertificate();
    cert.publicKey = this.leafPublicKey;
    cert.serialNumber = serial();
    cert.validity.notBefore = new Date(now - DAY_MS);
    cert.validity.notAfter = new Date(expires);
    cert.setSubject([{ name: 'commonName', value: host.slice(0, 64) }]);
    cert.setIssuer(this.caCert.subject.attributes);
    const altName = IPV4.test(host) ? { type: 7, ip: host } : { type: 2, value: host };
    cert.setExtensions([
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [altName] },
    ]);
    cert.sign(this.caKey, forge.md.sha256.create());
    const context = createSecureContext({
      key: this.leafKeyPem,
      cert: forge.pki.certificateToPem(cert) + forge.pki.certificateToPem(this.caCert),
    });
    return { context, expires };
  }
}
