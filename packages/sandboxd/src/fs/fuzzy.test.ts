import { describe, expect, it } from 'vitest';
import { fuzzyScore } from './fuzzy.js';
import { globToRegExp } from './walk.js';

describe('fuzzyScore', () => {
  it('matches subsequences case-insensitively and rejects the rest', () => {
    expect(fuzzyScore('idx', 'src/index.ts')).toBeDefined();
    expect(fuzzyScore('IDX', 'src/index.ts')).toBeDefined();
    expect(fuzzyScore('xdi', 'src/index.ts')).toBeUndefined();
  });

  it('ranks a basename substring above a scattered match', () => {
    const exact = fuzzyScore('main', 'src/main.ts') as number;
    const scattered = fuzzyScore('main', 'src/my/api/index.ts') as number;
    expect(exact).toBeGreaterThan(scattered);
  });

  it('prefers consecutive and word-start matches', () => {
    expect(fuzzyScore('ut', 'lib/utils.ts') as number).toBeGreaterThan(
      fuzzyScore('ut', 'lib/output.ts') as number,
    );
  });

  it('scores the empty pattern 0', () => {
    expect(fuzzyScore('', 'anything')).toBe(0);
  });
});

describe('globToRegExp', () => {
  it('supports *, ?, [..] and {a,b}', () => {
    expect(globToRegExp('*.ts').test('a.ts')).toBe(true);
    expect(globToRegExp('*.ts').test('a.tsx')).toBe(false);
    expect(globToRegExp('?.go').test('a.go')).toBe(true);
    expect(globToRegExp('[ab].txt').test('b.txt')).toBe(true);
    expect(globToRegExp('*.{js,ts}').test('x.js')).toBe(true);
    expect(globToRegExp('a+b.txt').test('a+b.txt')).toBe(true);
  });
});
