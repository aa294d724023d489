// Turns catalog text (a file, or a ConfigMap value) into catalog objects. Accepts what real
// File-Based Catalogs contain: one JSON object per line (the fast path), JSON objects
// concatenated or pretty-printed, and YAML documents separated by `---`.
import { createHash } from 'node:crypto';
import { parseAllDocuments } from 'yaml';
import { CatalogMalformedError } from './problems.js';

/** One declarative-config object as read, before validation. */
export interface CatalogObject {
  /** Its `schema` field, or '' when it has none. */
  readonly schema: string;
  /** The decoded object. */
  readonly value: Readonly<Record<string, unknown>>;
  /** Where it came from: "file:line". */
  readonly origin: string;
  /** sha256 (hex) of the object's text, used for the catalog's content digest. */
  readonly hash: string;
}

/** Which syntax a text is in; 'auto' looks at the first significant character. */
export type CatalogTextFormat = 'json' | 'yaml' | 'auto';

/** The syntax a file name implies, or undefined when the file is not catalog content. */
export function formatOfFile(name: string): 'json' | 'yaml' | undefined {
  if (name.endsWith('.json')) return 'json';
  if (name.endsWith('.yaml') || name.endsWith('.yml')) return 'yaml';
  return undefined;
}

/** Parses catalog text into objects; throws CatalogMalformedError naming file and line. */
export function parseCatalogText(
  text: string,
  file: string,
  format: CatalogTextFormat = 'auto',
): CatalogObject[] {
  // A byte-order mark is not part of the content (editors on some systems add one).
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const syntax = format === 'auto' ? detectFormat(text) : format;
  if (syntax === 'yaml') return parseYaml(text, file);
  return parseJsonLines(text, file) ?? parseJsonStream(text, file);
}

function detectFormat(text: string): 'json' | 'yaml' {
  const first = /\S/.exec(text);
  return first === null || first[0] === '{' ? 'json' : 'yaml';
}

function hashText(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function toObject(
  value: unknown,
  file: string,
  line: number,
  text: string,
): CatalogObject | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new CatalogMalformedError(file, line, 'expected an object');
  }
  const record = value as Record<string, unknown>;
  const schema = typeof record['schema'] === 'string' ? record['schema'] : '';
  return { schema, value: record, origin: `${file}:${line}`, hash: hashText(text) };
}

// The common layout: every line one complete object. Returns undefined as soon as a line is
// not a complete object, so the caller can retry with the general scanner.
function parseJsonLines(text: string, file: string): CatalogObject[] | undefined {
  const objects: CatalogObject[] = [];
  let start = 0;
  let line = 1;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    const raw = text.slice(start, end).trim();
    if (raw.length > 0) {
      if (raw[0] !== '{' || raw[raw.length - 1] !== '}') return undefined;
      const value = parseLineLiftingData(raw);
      if (value === undefined) return undefined;
      const object = toObject(value, file, line, raw);
      if (object !== undefined) objects.push(object);
    }
    start = end + 1;
    line++;
  }
  return objects;
}

const dataKey = '"data":"';
// The mark as JSON.parse returns it, and as it is written into JSON text (escaped: a raw
// control character is not allowed in a JSON string).
const placeholderMark = '\u0000olmq-lifted:';
const placeholderJson = '\\u0000olmq-lifted:';

// Parses one line, but keeps the big base64 strings of olm.bundle.object values ("data") as
// slices of the source text: copying ~100 MB of them through JSON.parse and the young
// generation would cost more than everything else in a large catalog's build.
function parseLineLiftingData(line: string): unknown {
  let at = line.indexOf(dataKey);
  if (at === -1) return tryParse(line);
  const lifted: string[] = [];
  const parts: string[] = [];
  let copied = 0;
  let nextBackslash = line.indexOf('\\');
  while (at !== -1) {
    const start = at + dataKey.length;
    const end = line.indexOf('"', start);
    if (end === -1) break;
    if (nextBackslash !== -1 && nextBackslash < start) nextBackslash = line.indexOf('\\', start);
    const escaped = nextBackslash !== -1 && nextBackslash < end;
    if (!escaped && end - start >= 256) {
      parts.push(line.slice(copied, start), `${placeholderJson}${lifted.length}`);
      lifted.push(line.slice(start, end));
      copied = end;
    }
    at = line.indexOf(dataKey, end);
  }
  if (lifted.length === 0) return tryParse(line);
  parts.push(line.slice(copied));
  const value = tryParse(parts.join(''));
  return value === undefined ? undefined : restoreLifted(value, lifted);
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function restoreLifted(value: unknown, lifted: readonly string[]): unknown {
  if (typeof value === 'string') {
    if (!value.startsWith(placeholderMark)) return value;
    return lifted[Number(value.slice(placeholderMark.length))] ?? value;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = restoreLifted(value[i], lifted);
    return value;
  }
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) record[key] = restoreLifted(record[key], lifted);
  }
  return value;
}

// General JSON: objects one after another, any whitespace between and inside them.
function parseJsonStream(text: string, file: string): CatalogObject[] {
  const objects: CatalogObject[] = [];
  let i = 0;
  let line = 1;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 10) {
      line++;
      i++;
      continue;
    }
    if (c === 32 || c === 9 || c === 13) {
      i++;
      continue;
    }
    if (c !== 123 /* { */) {
      throw new CatalogMalformedError(file, line, `unexpected character '${text[i] ?? ''}'`);
    }
    const startLine = line;
    const scanned = scanObject(text, i);
    if (scanned === undefined) {
      throw new CatalogMalformedError(file, startLine, 'object is not closed before end of file');
    }
    const raw = text.slice(i, scanned.end);
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      throw new CatalogMalformedError(file, startLine, detail, { cause: error });
    }
    const object = toObject(value, file, startLine, raw);
    if (object !== undefined) objects.push(object);
    line += scanned.newlines;
    i = scanned.end;
  }
  return objects;
}

// Finds the end of the JSON object starting at `start`, honouring strings and escapes.
function scanObject(text: string, start: number): { end: number; newlines: number } | undefined {
  let depth = 0;
  let newlines = 0;
  let i = start;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      i++;
      for (;;) {
        const quote = text.indexOf('"', i);
        if (quote === -1) return undefined;
        let backslashes = 0;
        for (let k = quote - 1; k >= i && text.charCodeAt(k) === 92; k--) backslashes++;
        i = quote + 1;
        if (backslashes % 2 === 0) break;
      }
      continue;
    }
    if (c === 123 || c === 91) depth++;
    else if (c === 125 || c === 93) {
      depth--;
      if (depth === 0) return { end: i + 1, newlines };
    } else if (c === 10) newlines++;
    i++;
  }
  return undefined;
}

function parseYaml(text: string, file: string): CatalogObject[] {
  const objects: CatalogObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    const startLine = lineAt(text, doc.contents?.range[0] ?? doc.range[0]);
    const problem = doc.errors[0];
    if (problem !== undefined) {
      const line = problem.linePos?.[0].line ?? startLine;
      throw new CatalogMalformedError(file, line, problem.message.split('\n')[0] ?? 'YAML error', {
        cause: problem,
      });
    }
    const value: unknown = doc.toJS();
    const object = toObject(value, file, startLine, JSON.stringify(value) ?? '');
    if (object !== undefined) objects.push(object);
  }
  return objects;
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}
