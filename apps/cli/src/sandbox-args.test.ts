import { describe, expect, it } from 'vitest';
import { EXIT, explain } from './errors.js';
import {
  commandLine,
  parseCopyEndpoint,
  parseEnvPairs,
  parseMemory,
  parsePort,
  processExitCode,
} from './sandbox-args.js';

describe('sandbox argument parsing', () => {
  it('tells remote SANDBOX:PATH from local paths', () => {
    expect(parseCopyEndpoint('box:/etc/hosts')).toEqual({ sandbox: 'box', path: '/etc/hosts' });
    expect(parseCopyEndpoint('my-box:rel/file')).toEqual({ sandbox: 'my-box', path: 'rel/file' });
    expect(parseCopyEndpoint('./a:b')).toEqual({ path: './a:b' });
    expect(parseCopyEndpoint('/tmp/x')).toEqual({ path: '/tmp/x' });
    expect(parseCopyEndpoint('Box:/x')).toEqual({ path: 'Box:/x' });
  });

  it('keeps one command word as a shell line and quotes several', () => {
    expect(commandLine(['ls | wc -l'])).toBe('ls | wc -l');
    expect(commandLine(['echo', 'a b', "it's", '$HOME'])).toBe(`echo 'a b' 'it'\\''s' '$HOME'`);
  });

  it('parses env pairs and ports, rejecting malformed ones', () => {
    expect(parseEnvPairs(['A=1', 'B=x=y', 'C='])).toEqual({ A: '1', B: 'x=y', C: '' });
    expect(() => parseEnvPairs(['NOEQ'])).toThrow(/KEY=VALUE/);
    expect(parsePort('3000')).toBe(3000);
    expect(() => parsePort('70000')).toThrow(/invalid port/);
  });

  it('reads --memory as MB or a size with a unit, refusing anything else with the usage code', () => {
    expect(parseMemory('2048')).toBe(2048);
    expect(parseMemory('512m')).toBe(512);
    expect(parseMemory('512MB')).toBe(512);
    expect(parseMemory('2g')).toBe(2048);
    expect(parseMemory('1.5GiB')).toBe(1536);
    for (const bad of ['lots', '2t', '', '-1', '0', '0.3m', '2 gigs', '1e3']) {
      expect(() => parseMemory(bad), bad).toThrow(/invalid --memory/);
      let caught: unknown;
      try {
        parseMemory(bad);
      } catch (error) {
        caught = error;
      }
      expect(explain('create sandbox', caught).exitCode).toBe(EXIT.usage);
    }
  });

  it('maps process states to shell exit codes', () => {
    expect(processExitCode({ status: 'completed', exitCode: 0 })).toBe(0);
    expect(processExitCode({ status: 'failed', exitCode: 42 })).toBe(42);
    expect(processExitCode({ status: 'killed', exitCode: -1 })).toBe(137);
    expect(processExitCode({ status: 'failed', exitCode: null })).toBe(1);
  });
});
