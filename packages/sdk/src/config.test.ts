import { describe, expect, it } from 'vitest';
import { resolveSettings } from './config.js';
import { TarmacConfigError } from './http/errors.js';

const file = {
  apiUrl: 'http://file:1',
  runUrl: 'http://file-run:1',
  workspace: 'fws',
  accountId: 'acc',
  apiKey: 'fk',
};

describe('resolveSettings', () => {
  it('prefers arguments, then environment, then the credentials file', () => {
    const env = { TARMAC_API_URL: 'http://env:2/', TARMAC_WORKSPACE: 'ews', TARMAC_API_KEY: 'ek' };
    expect(resolveSettings({ file, env })).toMatchObject({
      apiUrl: 'http://env:2',
      runUrl: 'http://file-run:1',
      workspace: 'ews',
      apiKey: 'ek',
      accountId: 'acc',
    });
    expect(resolveSettings({ file, env, args: { workspace: 'aws', apiKey: 'ak' } })).toMatchObject({
      workspace: 'aws',
      apiKey: 'ak',
    });
    expect(resolveSettings({ file })).toMatchObject({
      apiUrl: 'http://file:1',
      apiKey: 'fk',
      workspace: 'fws',
    });
  });

  it('defaults runUrl to apiUrl and treats empty variables as unset', () => {
    expect(resolveSettings({ env: { TARMAC_API_URL: 'http://a:1', TARMAC_RUN_URL: '' } }).runUrl).toBe(
      'http://a:1',
    );
  });

  it('decodes TARMAC_CLIENT_CREDENTIALS and lets it outrank a key from the file', () => {
    const env = { TARMAC_CLIENT_CREDENTIALS: btoa('sa_1:s3cret') };
    expect(resolveSettings({ file, env })).toMatchObject({
      apiKey: undefined,
      clientId: 'sa_1',
      clientSecret: 's3cret',
    });
    expect(() => resolveSettings({ file, env: { TARMAC_CLIENT_CREDENTIALS: btoa('nocolon') } })).toThrow(
      TarmacConfigError,
    );
  });

  it('fails with a hint when no API URL is known', () => {
    expect(() => resolveSettings({})).toThrow(/tarmac login/);
  });
});
