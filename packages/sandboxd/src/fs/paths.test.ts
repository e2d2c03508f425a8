import { describe, expect, it } from 'vitest';
import { rawRemainder, resolveRequestPath, resolveUserPath } from './paths.js';

const ctx = { workingDir: '/work/app', home: '/home/me' };

describe('path rules (reference §1.1)', () => {
  it('takes the raw remainder after the prefix, without the query', () => {
    expect(rawRemainder('http://h/filesystem/a%2Fb?x=1', '/filesystem')).toBe('/a%2Fb');
    expect(rawRemainder('/filesystem/', '/filesystem')).toBe('/');
  });

  it('resolves relative paths against the working directory', () => {
    expect(resolveRequestPath('/src/index.ts', ctx)).toBe('/work/app/src/index.ts');
    expect(resolveRequestPath('/', ctx)).toBe('/work/app');
    expect(resolveRequestPath('', ctx)).toBe('/work/app');
  });

  it('treats a %2F anywhere as absolute', () => {
    expect(resolveRequestPath('/%2Fetc%2Fhosts', ctx)).toBe('/etc/hosts');
    expect(resolveRequestPath('etc/hosts'.replace('/', '%2F'), ctx)).toBe('/etc/hosts');
    expect(resolveRequestPath('/%2Ftmp/x', ctx)).toBe('/tmp/x');
  });

  it('expands ~ and collapses //', () => {
    expect(resolveRequestPath('/~/notes.txt', ctx)).toBe('/home/me/notes.txt');
    expect(resolveUserPath('~', ctx)).toBe('/home/me');
    expect(resolveRequestPath('/a//b', ctx)).toBe('/work/app/a/b');
  });

  it('refuses relative paths escaping the working directory, allows absolute ones', () => {
    expect(() => resolveRequestPath('/../etc/passwd', ctx)).toThrow(/escapes/);
    expect(() => resolveUserPath('a/../../x', ctx)).toThrow(/escapes/);
    expect(resolveUserPath('/etc/passwd', ctx)).toBe('/etc/passwd');
    expect(resolveUserPath('a/../b', ctx)).toBe('/work/app/b');
  });

  it('400s on a malformed encoding', () => {
    expect(() => resolveRequestPath('/%E0%A4%A', ctx)).toThrow(/encoding/);
  });
});
