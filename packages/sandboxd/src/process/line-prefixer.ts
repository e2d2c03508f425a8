// Turns output chunks into `stdout:<line>\n` / `stderr:<line>\n` lines for /logs/stream
// (reference sandbox-api.md §1.3 "Log stream", §6.3), carrying partial lines between chunks.
import type { StreamName } from './logs.js';

export class LinePrefixer {
  private readonly carry: Record<StreamName, string> = { stdout: '', stderr: '' };

  constructor(private readonly emit: (text: string) => void) {}

  push(stream: StreamName, chunk: string): void {
    const parts = (this.carry[stream] + chunk).split('\n');
    this.carry[stream] = parts.pop() ?? '';
    if (parts.length > 0) this.emit(parts.map((l) => `${stream}:${l}\n`).join(''));
  }

  flush(): void {
    for (const s of ['stdout', 'stderr'] as const) {
      if (this.carry[s] !== '') this.emit(`${s}:${this.carry[s]}\n`);
      this.carry[s] = '';
    }
  }
}
