/**
 * Server-sent events as providers send them (WHATWG HTML §9.2 "event stream"): events end at a
 * blank line, `event:` names one, `data:` lines join with '\n', CR/CRLF/LF all end a line, comments
 * (`:`) are skipped. UTF-8 split across network chunks is kept whole (StringDecoder).
 */
import { StringDecoder } from 'node:string_decoder';

export type SseHandler = (event: string | undefined, data: string) => void;

export class SseParser {
  private readonly decoder = new StringDecoder('utf8');
  private buffer = '';
  private event: string | undefined;
  private data: string[] = [];

  constructor(private readonly onEvent: SseHandler) {}

  push(chunk: Buffer | string): void {
    let text = this.buffer + (typeof chunk === 'string' ? chunk : this.decoder.write(chunk));
    // A CR at the end may be half of a CRLF: keep it for the next chunk.
    const heldCr = text.endsWith('\r');
    if (heldCr) text = text.slice(0, -1);
    const lines = text.split(/\r\n|\r|\n/);
    this.buffer = (lines.pop() ?? '') + (heldCr ? '\r' : '');
    for (const line of lines) this.line(line);
  }

  end(): void {
    const rest = this.buffer + this.decoder.end();
    this.buffer = '';
    if (rest) this.line(rest.replace(/\r$/, ''));
    this.line('');
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length > 0) this.onEvent(this.event, this.data.join('\n'));
      this.event = undefined;
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
  }
}
