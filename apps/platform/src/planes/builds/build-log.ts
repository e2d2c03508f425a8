/**
 * One build's log (issue 15: "build logs streamable"): the last lines kept in memory (bounded),
 * followers told of each new line and of the end. Secret build-arg values are masked before a
 * line is stored, so neither the stream nor the FAILED event message can carry them.
 */
const MAX_LINES = 2000;
const MAX_LINE_CHARS = 4000;

export class BuildLog {
  private readonly lines: string[] = [];
  private readonly followers = new Set<(line: string | null) => void>();
  private ended = false;
  private secrets: string[] = [];

  /** Values masked from every later line (the `.env.build` values). */
  mask(values: string[]): void {
    this.secrets = values.filter((v) => v.length >= 3).sort((a, b) => b.length - a.length);
  }

  add(line: string): void {
    let text = line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line;
    for (const s of this.secrets) text = text.split(s).join('***');
    this.lines.push(text);
    if (this.lines.length > MAX_LINES) this.lines.shift();
    for (const f of this.followers) f(text);
  }

  end(): void {
    this.ended = true;
    for (const f of this.followers) f(null);
    this.followers.clear();
  }

  get done(): boolean {
    return this.ended;
  }

  snapshot(): string[] {
    return [...this.lines];
  }

  tail(n: number): string[] {
    return this.lines.slice(-n);
  }

  /** Calls `f` with each new line, then null at the end; returns the function that stops it. */
  follow(f: (line: string | null) => void): () => void {
    if (this.ended) {
      f(null);
      return () => {};
    }
    this.followers.add(f);
    return () => this.followers.delete(f);
  }
}
