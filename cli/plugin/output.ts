// Printing as kubectl prints: tables with upper-case headers and aligned columns (`<none>` for
// an empty cell), `-o json|yaml`, colour only on a terminal and never with NO_COLOR, progress of
// long waits on stderr so that stdout stays parseable.
import { stringify } from 'yaml';
import type { OutputFormat } from './types.js';

/** Where a command writes; injected so tests and `fleet` can collect output. */
export interface Printer {
  out(text: string): void;
  progress(text: string): void;
  /** Whether stdout takes ANSI colour. */
  readonly colour: boolean;
}

/** The process's stdout/stderr, colour decided as kubectl-like tools do. */
export function processPrinter(): Printer {
  const noColor = process.env['NO_COLOR'] !== undefined && process.env['NO_COLOR'] !== '';
  return {
    out: (text) => process.stdout.write(text),
    progress: (text) => process.stderr.write(text),
    colour: process.stdout.isTTY === true && !noColor,
  };
}

/** Text styles; plain when colour is off. */
export function styles(colour: boolean): {
  red(s: string): string;
  yellow(s: string): string;
  green(s: string): string;
  bold(s: string): string;
} {
  const wrap = (code: string) => (s: string) => (colour ? `\u001b[${code}m${s}\u001b[0m` : s);
  return { red: wrap('31'), yellow: wrap('33'), green: wrap('32'), bold: wrap('1') };
}

/** A kubectl-style table; empty cells print `<none>`. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const cells = [
    headers.map((h) => h.toUpperCase()),
    ...rows.map((r) => r.map((c) => (c === '' ? '<none>' : c))),
  ];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c.padEnd((widths[i] ?? 0) + 3)))
        .join('')
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join('');
}

/** Prints `value` as JSON or YAML, or `asTable()` for the table format. */
export function render(format: OutputFormat, value: unknown, asTable: () => string): string {
  if (format === 'json') return `${JSON.stringify(value, null, 2)}\n`;
  if (format === 'yaml') return stringify(value);
  return asTable();
}

/** kubectl's "No resources found" line for an empty list. */
export function noneFound(namespace: string | undefined): string {
  return namespace === undefined
    ? 'No resources found\n'
    : `No resources found in ${namespace} namespace.\n`;
}
