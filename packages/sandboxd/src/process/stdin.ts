// Bytes to a process's stdin (POST /process/{id}/stdin, issue 14 item 6), bounded in time: a
// process that stops reading fills the pipe, and sandboxd must not buffer for it without end.
import type { Writable } from 'node:stream';
import { HttpError } from '../http/errors.js';

/** Resolves once the pipe took `data`; 503 when it does not within `drainMs` or its end is gone. */
export function writeDrained(
  pipe: Writable,
  data: Buffer,
  drainMs: number,
  identifier: string,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const stopped = () => new HttpError(503, `process ${identifier} stopped reading its stdin`);
    const timer = setTimeout(() => finish(stopped()), drainMs);
    const onError = () => finish(stopped());
    const onClose = () => finish(stopped());
    const finish = (err?: HttpError) => {
      clearTimeout(timer);
      pipe.off('error', onError);
      pipe.off('close', onClose);
      pipe.off('drain', onDrain);
      if (err) reject(err);
      else resolve();
    };
    const onDrain = () => finish();
    pipe.once('error', onError);
    pipe.once('close', onClose);
    if (pipe.write(data, (err) => (err ? finish(stopped()) : undefined))) finish();
    else pipe.once('drain', onDrain);
  });
}
