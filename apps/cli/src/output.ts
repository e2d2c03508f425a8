import { stringify } from 'yaml';

export type OutputFormat = 'table' | 'json' | 'yaml';

export function parseFormat(value: string | undefined): OutputFormat {
  if (value === undefined || value === 'table' || value === 'json' || value === 'yaml')
    return value ?? 'table';
  throw new Error(`unknown output format "${value}" (use table, json or yaml)`);
}

/** Left-aligned columns separated by three spaces, header in capitals (kubectl style). */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('   ')
      .trimEnd();
  return [line(headers.map((h) => h.toUpperCase())), ...rows.map(line)].join('\n') + '\n';
}

export function render(format: OutputFormat, value: unknown, asTable: () => string): string {
  if (format === 'json') return `${JSON.stringify(value, null, 2)}\n`;
  if (format === 'yaml') return stringify(value);
  return asTable();
}

/** "3m", "2h", "5d" since an ISO time; blank when unknown. */
export function age(iso: string | undefined, now = Date.now()): string {
  if (!iso) return '';
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (Number.isNaN(seconds)) return '';
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)}h`;
  return `${Math.round(seconds / 86_400)}d`;
}
