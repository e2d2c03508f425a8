import { describe, expect, it } from 'vitest';
import { firstMatch, matchesPattern, patternProblem } from './domain-pattern.js';

describe('domain patterns', () => {
  it.each([
    ['api.example.com', 'api.example.com', true],
    ['API.Example.com.', 'api.example.com', true],
    ['x.api.example.com', 'api.example.com', false],
    ['a.example.com', '*.example.com', true],
    ['a.b.example.com', '*.example.com', true],
    ['example.com', '*.example.com', false],
    ['badexample.com', '*.example.com', false],
    ['10.0.0.1', '10.0.0.1', true],
  ])('%s against %s → %s', (host, pattern, expected) => {
    expect(matchesPattern(host, pattern)).toBe(expected);
  });

  it('names the first matching pattern', () => {
    expect(firstMatch('a.example.com', ['other.com', '*.example.com', 'a.example.com'])).toBe(
      '*.example.com',
    );
    expect(firstMatch('z.org', ['*.example.com'])).toBeUndefined();
  });

  it.each([
    ['', 'is empty'],
    ['*', 'may use "*" only as the leading "*." wildcard'],
    ['a.*.com', 'may use "*" only as the leading "*." wildcard'],
    ['*.-x', 'is not a domain name after "*."'],
    ['exa mple.com', 'is not a domain name'],
    ['-bad.com', 'is not a domain name'],
    ['999.1.1.1', 'is not a domain name'],
  ])('refuses %j: %s', (pattern, problem) => {
    expect(patternProblem(pattern)).toBe(problem);
  });

  it.each(['example.com', '*.example.com', 'xn--bcher-kva.example', '10.1.2.3', 'localhost'])(
    'accepts %s',
    (p) => {
      expect(patternProblem(p)).toBeUndefined();
    },
  );
});
