/**
 * A tiny spinner on stderr for waits. Only on a TTY: in pipes and CI it prints nothing while
 * spinning and one final line, so logs stay clean.
 */
export interface Spinner {
  update(text: string): void;
  /** A line that stays (TTY or not), printed above the spinner. */
  note(line: string): void;
  succeed(text: string): void;
  fail(): void;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export function startSpinner(stream: NodeJS.WriteStream, text: string): Spinner {
  let current = text;
  let frame = 0;
  const tty = Boolean(stream.isTTY);
  const draw = () => stream.write(`\r\x1b[2K${FRAMES[frame++ % FRAMES.length]} ${current}`);
  const timer = tty ? setInterval(draw, 80) : undefined;
  if (tty) draw();
  const stop = (line: string) => {
    if (timer) clearInterval(timer);
    stream.write(`${tty ? '\r\x1b[2K' : ''}${line}\n`);
  };
  return {
    update: (next) => {
      current = next;
    },
    note: (line) => {
      stream.write(`${tty ? '\r\x1b[2K' : ''}${line}\n`);
      if (tty) draw();
    },
    succeed: (final) => stop(`✓ ${final}`),
    // The error line that follows says why; on a TTY just clear the spinner.
    fail: () => {
      if (timer) clearInterval(timer);
      if (tty) stream.write('\r\x1b[2K');
    },
  };
}
