import { createServer, connect } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkCaMaterial, createCaMaterial, LeafCertificates } from './certificate-authority.js';

describe('egress CA', () => {
  const ca = createCaMaterial(new Date());

  it('is a CA certificate matching its key', () => {
    const cert = new X509Certificate(ca.certPem);
    expect(cert.ca).toBe(true);
    expect(cert.subject).toContain('CN=Tarmac egress CA');
    expect(() => checkCaMaterial(ca)).not.toThrow();
    expect(() =>
      checkCaMaterial({ certPem: ca.certPem, keyPem: createCaMaterial(new Date()).keyPem }),
    ).toThrow(/does not match/);
  });

  it('mints leaves a client trusting only the CA accepts for that host, and caches them', async () => {
    const leaves = new LeafCertificates(ca, { maxEntries: 2 });
    const ctx = leaves.contextFor('api.example.test');
    expect(leaves.contextFor('api.example.test')).toBe(ctx);
    leaves.contextFor('b.test');
    leaves.contextFor('c.test');
    expect(leaves.size).toBe(2);
    const server = createServer({ SNICallback: (name, cb) => cb(null, leaves.contextFor(name)) }, (s) =>
      s.end('ok'),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const talk = (servername: string, checkAs: string) =>
      new Promise<string>((resolve, reject) => {
        const s = connect({
          port,
          host: '127.0.0.1',
          servername,
          ca: ca.certPem,
          checkServerIdentity: (_h, cert) => {
            const alt = cert.subjectaltname ?? '';
            return alt.includes(`DNS:${checkAs}`) ? undefined : new Error(`${alt} is not ${checkAs}`);
          },
        });
        s.on('data', (d) => resolve(String(d)));
        s.on('error', reject);
      });
    expect(await talk('api.example.test', 'api.example.test')).toBe('ok');
    await expect(talk('api.example.test', 'other.test')).rejects.toThrow(/is not other.test/);
    server.close();
  });
});
