import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rootCertificates } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExtraCaError, loadExtraCaCerts, pemCertificates } from './extra-ca-certs.js';

// Issue 14 item 10: the extra CAs main.ts reads for TARMAC_EXTRA_CA_CERTS.
describe('loadExtraCaCerts', () => {
  let dir = '';
  const ca = (name: string): string => {
    const out = join(dir, `${name}.pem`);
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        join(dir, `${name}.key`),
        '-out',
        out,
        '-days',
        '1',
        '-subj',
        `/CN=${name}`,
      ],
      { stdio: 'ignore' },
    );
    return readFileSync(out, 'utf8');
  };
  let a = '';
  let b = '';

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'extra-ca-'));
    a = ca('a');
    b = ca('b');
    mkdirSync(join(dir, 'local/sub'), { recursive: true });
    writeFileSync(join(dir, 'local/corp.crt'), a);
    writeFileSync(join(dir, 'local/sub/other.crt'), b);
    writeFileSync(join(dir, 'local/README'), 'not a certificate file');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("reads files and directories (their *.crt, *.pem, recursively), without duplicates or node's roots", async () => {
    const certs = await loadExtraCaCerts({
      required: [join(dir, 'local')],
      optional: [join(dir, 'a.pem'), join(dir, 'missing-dir')],
    });
    expect(certs.map((c) => c.trim())).toEqual([a.trim(), b.trim()]);
    writeFileSync(join(dir, 'bundle.pem'), [rootCertificates[0], a].join('\n'));
    expect(
      (await loadExtraCaCerts({ required: [join(dir, 'bundle.pem')], optional: [] })).map((c) => c.trim()),
    ).toEqual([a.trim()]);
  });

  it('refuses an operator path that is missing, empty of certificates, or holds a broken one', async () => {
    await expect(loadExtraCaCerts({ required: [join(dir, 'nope.pem')], optional: [] })).rejects.toThrow(
      /nope\.pem: ENOENT/,
    );
    writeFileSync(join(dir, 'empty.pem'), 'nothing here');
    await expect(loadExtraCaCerts({ required: [join(dir, 'empty.pem')], optional: [] })).rejects.toThrow(
      /no PEM certificate/,
    );
    expect(() =>
      pemCertificates('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----', 'x.pem'),
    ).toThrow(ExtraCaError);
  });
});
