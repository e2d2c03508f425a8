import { describe, expect, it } from 'vitest';
import { customHostname, previewAddress } from './preview-address.js';

describe('previewAddress', () => {
  it('reads the preview id of platform-domain hosts, with or without the region label', () => {
    expect(previewAddress('0123abcd.local.preview.localhost:8080', 'localhost')).toEqual({
      kind: 'id',
      previewId: '0123abcd',
    });
    expect(previewAddress('0123ABCD.preview.localhost', 'localhost')).toEqual({
      kind: 'id',
      previewId: '0123abcd',
    });
    expect(previewAddress('abc.eu.preview.run.example.org.', 'run.example.org')).toEqual({
      kind: 'id',
      previewId: 'abc',
    });
  });

  it('refuses what is not a preview host of ours', () => {
    for (const host of [
      undefined,
      'localhost:8080',
      '127.0.0.1:8080',
      '[::1]:8080',
      'sbx-box-default.local.localhost',
      'a.b.c.preview.localhost', // too deep
      'sbx-x.preview.localhost',
      'preview.localhost', // no id
      'x_y.preview.localhost',
    ]) {
      expect(previewAddress(host, 'localhost'), String(host)).toBeUndefined();
    }
  });

  it('recognises custom-domain shapes `<prefix>.preview.<domain>` and `preview.<domain>`', () => {
    expect(previewAddress('app.preview.example.com', 'localhost')).toEqual({
      kind: 'custom',
      hostname: 'app.preview.example.com',
    });
    expect(previewAddress('Preview.Example.com:443', 'localhost')).toEqual({
      kind: 'custom',
      hostname: 'preview.example.com',
    });
    expect(previewAddress('preview.com', 'localhost')).toBeUndefined(); // no registrable domain
    expect(previewAddress('www.example.com', 'localhost')).toBeUndefined();
    expect(customHostname('Example.com', 'app')).toBe('app.preview.example.com');
    expect(customHostname('example.com', undefined)).toBe('preview.example.com');
  });
});
