// The PTY behind /terminal/ws. `@lydell/node-pty` ships prebuilt `pty.node` binaries; in the
// esbuild bundle its binary loader is replaced (scripts/bundle.mjs) so the addon is loaded from
// `lib/pty.node` next to the bundle (/.tarmac/lib/pty.node in a sandbox).
import * as nodePty from '@lydell/node-pty';

export interface Pty {
  readonly pid: number;
  onData(cb: (data: string) => void): void;
  onExit(cb: (e: { exitCode: number }) => void): void;
  write(data: string): void;
  resize(cols: number, rows: number): void;
  kill(): void;
}

export interface PtyOptions {
  shell: string;
  cwd: string;
  env: Record<string, string>;
  cols: number;
  rows: number;
}

export type PtyFactory = (o: PtyOptions) => Pty;

export const nodePtyFactory: PtyFactory = (o) => {
  const p = nodePty.spawn(o.shell, [], {
    name: 'xterm-256color',
    cols: o.cols,
    rows: o.rows,
    cwd: o.cwd,
    env: { ...o.env, TERM: 'xterm-256color' },
  });
  return {
    pid: p.pid,
    onData: (cb) => void p.onData(cb),
    onExit: (cb) => void p.onExit((e) => cb({ exitCode: e.exitCode })),
    write: (d) => p.write(d),
    resize: (c, r) => p.resize(c, r),
    kill: () => p.kill(),
  };
};
