// Certificates for "the outside world": its own CA (trusted by the egress proxy through
// `extraUpstreamCa`, as the brief asks), a server certificate for the test's domain names, and a
// self-signed certificate nobody trusts. Made with the openssl command line.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface OutsideCerts {
  caPem: string;
  caFile: string;
  cert: string;
  key: string;
  badCert: string;
  badKey: string;
}

function openssl(args: string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

export function makeOutsideCerts(dir: string, names: readonly string[]): OutsideCerts {
  const f = (n: string) => join(dir, n);
  openssl([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=Outside Test CA',
  ]);
  openssl([
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    f('server.key'),
    '-out',
    f('server.csr'),
    '-subj',
    `/CN=${names[0] ?? 'outside'}`,
  ]);
  writeFileSync(
    f('san.ext'),
    `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}\nextendedKeyUsage=serverAuth\n`,
  );
  openssl([
    'x509',
    '-req',
    '-in',
    f('server.csr'),
    '-CA',
    f('ca.pem'),
    '-CAkey',
    f('ca.key'),
    '-CAcreateserial',
    '-out',
    f('server.pem'),
    '-days',
    '2',
    '-extfile',
    f('san.ext'),
  ]);
  openssl([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    f('bad.key'),
    '-out',
    f('bad.pem'),
    '-days',
    '2',
    '-subj',
    `/CN=${names[0] ?? 'outside'}`,
    '-addext',
    `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}`,
  ]);
  return {
    caPem: readFileSync(f('ca.pem'), 'utf8'),
    caFile: f('ca.pem'),
    cert: f('server.pem'),
    key: f('server.key'),
    badCert: f('bad.pem'),
    badKey: f('bad.key'),
  };
}
