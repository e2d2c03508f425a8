import { describe, expect, it } from 'vitest';
import { normalizeRef, refDirName, resolveRef } from './refs.js';

describe('image references', () => {
  it('adds :latest and drops a Docker Hub prefix', () => {
    expect(normalizeRef('tarmac/base')).toBe('tarmac/base:latest');
    expect(normalizeRef('docker.io/library/alpine:3.20')).toBe('library/alpine:3.20');
    expect(normalizeRef('registry.local:5000/x/y')).toBe('registry.local:5000/x/y:latest');
  });

  it('resolves the vendor base image to ours', () => {
    expect(resolveRef('blaxel/base-image:latest')).toBe('tarmac/base:latest');
    expect(resolveRef('blaxel/base-image')).toBe('tarmac/base:latest');
    expect(resolveRef('blaxel/python-data-science:latest')).toBe('blaxel/python-data-science:latest');
  });

  it('rejects junk and makes slash-free directory names', () => {
    expect(() => normalizeRef('../../etc')).toThrow();
    expect(() => normalizeRef('UPPER/case')).toThrow();
    expect(refDirName('tarmac/base:latest')).not.toContain('/');
  });
});
