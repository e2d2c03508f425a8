import { describe, expect, it } from 'vitest';
import { commandContainerArgs, exitCodeFromLog, EXIT_MARKER } from './command-exit.js';
import { commandArgs } from './spec.js';

describe('command containers', () => {
  it('reads the last exit marker of a log tail, and nothing from output after it', () => {
    expect(exitCodeFromLog(`hello\n${EXIT_MARKER}3\n`)).toBe(3);
    expect(exitCodeFromLog(`${EXIT_MARKER}0\nmore ${EXIT_MARKER}17\n`)).toBe(17);
    expect(exitCodeFromLog(`${EXIT_MARKER}0\nprinted after\n`)).toBeNull();
    expect(exitCodeFromLog('no marker')).toBeNull();
  });

  it('wraps the command in busybox sh when the runtime ships it', () => {
    const args = commandContainerArgs({ supervised: true }, ['/bin/task', 'a b']);
    expect(args.slice(-2)).toEqual(['/bin/task', 'a b']);
    expect(args).toContain('/.tarmac/bin/busybox');
    expect(commandContainerArgs({ supervised: false }, ['/bin/task'])).toEqual([
      '/.tarmac/bin/tini',
      '-g',
      '--',
      '/bin/task',
    ]);
  });

  it("runs the image's Entrypoint then Cmd when the spec names no command", () => {
    expect(commandArgs([], { entrypoint: ['/bin/sh'], cmd: ['/task.sh'] })).toEqual(['/bin/sh', '/task.sh']);
    expect(commandArgs(['x'], { entrypoint: ['/bin/sh'] })).toEqual(['x']);
    expect(() => commandArgs([], {})).toThrow(/no Entrypoint or Cmd/);
  });
});
