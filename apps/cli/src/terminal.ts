import type { Sandbox } from '@tarmac/sdk';
import type { CliContext } from './context.js';

/**
 * Bridges the local terminal to a sandbox PTY: raw mode so every key (Ctrl-C included) goes to
 * the remote shell, size sent at start and on every resize, and the local mode restored however
 * the session ends. Resolves with 0 when the remote side closes.
 */
export async function connectTerminal(
  ctx: CliContext,
  sandbox: Sandbox,
  options: { shell?: string | undefined; sessionId?: string },
): Promise<number> {
  const { stdin, stdout } = ctx;
  const terminal = await sandbox.terminal.connect({
    cols: stdout.columns || 80,
    rows: stdout.rows || 24,
    ...(options.shell ? { shell: options.shell } : {}),
    ...(options.sessionId ? { sessionId: options.sessionId } : {}),
  });
  const raw = Boolean(stdin.isTTY);
  if (raw) stdin.setRawMode(true);
  stdin.resume();
  const onInput = (data: Buffer) => terminal.write(data.toString('utf8'));
  const onResize = () => terminal.resize(stdout.columns || 80, stdout.rows || 24);
  // Piped input that runs out: send EOF (Ctrl-D) so the remote shell exits and so do we.
  const onEnd = () => terminal.write('\u0004');
  stdin.on('data', onInput);
  stdin.on('end', onEnd);
  stdout.on('resize', onResize);
  terminal.onData((data) => stdout.write(data));
  terminal.onError((message) => ctx.stderr.write(`\r\ntarmac: terminal: ${message}\r\n`));
  return new Promise<number>((resolve) => {
    terminal.onClose(() => {
      stdin.off('data', onInput);
      stdin.off('end', onEnd);
      stdout.off('resize', onResize);
      if (raw) stdin.setRawMode(false);
      stdin.pause();
      resolve(0);
    });
  });
}
