import { describe, expect, it } from 'vitest';
import { age, parseFormat, render, table } from './output.js';

describe('output', () => {
  it('aligns table columns under capitalised headers', () => {
    expect(
      table(
        ['name', 'status'],
        [
          ['a', 'DEPLOYED'],
          ['longer-name', 'FAILED'],
        ],
      ),
    ).toBe('NAME          STATUS\na             DEPLOYED\nlonger-name   FAILED\n');
  });
  it('renders json and yaml, and rejects unknown formats', () => {
    expect(render('json', { a: 1 }, () => '')).toBe('{\n  "a": 1\n}\n');
    expect(render('yaml', { a: [1] }, () => '')).toBe('a:\n  - 1\n');
    expect(() => parseFormat('xml')).toThrow(/unknown output format/);
  });
  it('shows ages in the largest sensible unit', () => {
    const now = Date.parse('2026-01-10T00:00:00Z');
    expect(age('2026-01-09T23:59:30Z', now)).toBe('30s');
    expect(age('2026-01-09T23:00:00Z', now)).toBe('60m');
    expect(age('2026-01-01T00:00:00Z', now)).toBe('9d');
    expect(age(undefined, now)).toBe('');
  });
});
