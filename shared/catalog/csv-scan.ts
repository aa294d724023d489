// Reads the few CSV fields the index needs straight from the JSON bytes, without decoding the
// whole CSV: deployments and permissions make up most of a CSV and allocating them for every
// bundle of a large catalog costs more than the rest of an index build. Falls back (returns
// undefined) on anything unexpected, and the caller then decodes the CSV fully.

/** The CSV fields the index reads, decoded; absent fields are undefined. */
export interface CsvFields {
  /** The top-level kind. */
  kind?: unknown;
  /** metadata.annotations["olm.skipRange"]. */
  skipRange?: unknown;
  /** Fields of spec the index reads, by name. CRD and API service descriptions keep only
   * name, group, version and kind of their owned/required entries. */
  readonly spec: Partial<Record<CsvSpecField, unknown>>;
}

/** spec fields the index reads. */
export type CsvSpecField =
  | 'installModes'
  | 'customresourcedefinitions'
  | 'apiservicedefinitions'
  | 'replaces'
  | 'skips'
  | 'displayName'
  | 'provider';

const specFields = new Set<string>([
  'installModes',
  'customresourcedefinitions',
  'apiservicedefinitions',
  'replaces',
  'skips',
  'displayName',
  'provider',
]);

// Works on the bytes themselves: JSON's structural characters are ASCII, so multi-byte UTF-8
// text cannot be mistaken for them, and no string of the whole CSV is ever allocated.
class Scanner {
  i = 0;
  constructor(
    readonly bytes: Uint8Array,
    readonly buffer: Buffer,
    readonly end: number,
  ) {}

  ws(): void {
    const b = this.bytes;
    for (;;) {
      const c = b[this.i];
      if (c === 32 || c === 10 || c === 13 || c === 9) this.i++;
      else return;
    }
  }

  // Ends just after the closing quote of the string starting at this.i.
  skipString(): void {
    const b = this.bytes;
    let i = this.i + 1;
    for (;;) {
      const quote = this.buffer.indexOf(34, i);
      if (quote === -1 || quote >= this.end) throw new RangeError('unterminated string');
      let backslashes = 0;
      for (let k = quote - 1; k >= i && b[k] === 92; k--) backslashes++;
      i = quote + 1;
      if (backslashes % 2 === 0) break;
    }
    this.i = i;
  }

  skipValue(): void {
    const b = this.bytes;
    const c = b[this.i];
    if (c === 34) return this.skipString();
    if (c === 123 || c === 91) {
      let depth = 0;
      while (this.i < this.end) {
        const d = b[this.i];
        if (d === 34) {
          this.skipString();
          continue;
        }
        if (d === 123 || d === 91) depth++;
        else if (d === 125 || d === 93) {
          depth--;
          if (depth === 0) {
            this.i++;
            return;
          }
        }
        this.i++;
      }
      throw new RangeError('unterminated value');
    }
    // number, true, false, null
    while (this.i < this.end) {
      const d = b[this.i];
      if (d === 44 || d === 125 || d === 93 || d === 32 || d === 10 || d === 13 || d === 9) return;
      this.i++;
    }
  }

  // The JSON text of the value at this.i, decoded as UTF-8.
  valueText(): string {
    const start = this.i;
    this.skipValue();
    return this.buffer.toString('utf8', start, this.i);
  }

  // The value at this.i, decoded.
  value(): unknown {
    return JSON.parse(this.valueText());
  }

  // Calls onElement for each element of the array at this.i; onElement must consume it.
  elements(onElement: () => void): void {
    const b = this.bytes;
    if (b[this.i] !== 91) throw new RangeError('expected array');
    this.i++;
    this.ws();
    if (b[this.i] === 93) {
      this.i++;
      return;
    }
    for (;;) {
      this.ws();
      onElement();
      this.ws();
      const c = b[this.i];
      this.i++;
      if (c === 93) return;
      if (c !== 44) throw new RangeError('expected comma');
      if (this.i >= this.end) throw new RangeError('unexpected end');
    }
  }

  // Calls onKey for each member of the object at this.i; onKey must consume the value.
  members(onKey: (key: string) => void): void {
    const b = this.bytes;
    if (b[this.i] !== 123) throw new RangeError('expected object');
    this.i++;
    this.ws();
    if (b[this.i] === 125) {
      this.i++;
      return;
    }
    for (;;) {
      this.ws();
      const start = this.i;
      this.skipString();
      const raw = this.buffer.toString('utf8', start + 1, this.i - 1);
      const key = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
      this.ws();
      if (b[this.i] !== 58) throw new RangeError('expected colon');
      this.i++;
      this.ws();
      onKey(key);
      this.ws();
      const c = b[this.i];
      this.i++;
      if (c === 125) return;
      if (c !== 44) throw new RangeError('expected comma');
      if (this.i >= this.end) throw new RangeError('unexpected end');
    }
  }
}

const descriptionKeys = new Set(['name', 'group', 'version', 'kind']);

// owned/required lists of CRD or API service descriptions, without their (large) descriptors.
function scanDescriptions(s: Scanner): unknown {
  if (s.bytes[s.i] !== 123) return s.value();
  const out: Record<string, unknown[]> = {};
  s.members((listKey) => {
    if ((listKey !== 'owned' && listKey !== 'required') || s.bytes[s.i] !== 91) {
      s.skipValue();
      return;
    }
    const items: unknown[] = [];
    s.elements(() => {
      if (s.bytes[s.i] !== 123) {
        items.push(s.value());
        return;
      }
      const item: Record<string, unknown> = {};
      s.members((key) => {
        if (descriptionKeys.has(key)) item[key] = s.value();
        else s.skipValue();
      });
      items.push(item);
    });
    out[listKey] = items;
  });
  return out;
}

/**
 * Extracts the fields the index needs from a CSV's JSON (the first `length` bytes of `bytes`);
 * undefined if they are not a well-formed JSON object.
 */
export function scanCsvJson(bytes: Buffer, length = bytes.length): CsvFields | undefined {
  const s = new Scanner(bytes, bytes, length);
  const out: CsvFields = { spec: {} };
  try {
    s.ws();
    s.members((key) => {
      if (key === 'kind') out.kind = s.value();
      else if (key === 'metadata') {
        s.members((metaKey) => {
          if (metaKey === 'annotations' && s.bytes[s.i] === 123) {
            s.members((annotation) => {
              if (annotation === 'olm.skipRange') out.skipRange = s.value();
              else s.skipValue();
            });
          } else s.skipValue();
        });
      } else if (key === 'spec') {
        s.members((specKey) => {
          if (specKey === 'customresourcedefinitions' || specKey === 'apiservicedefinitions') {
            out.spec[specKey] = scanDescriptions(s);
          } else if (specFields.has(specKey)) out.spec[specKey as CsvSpecField] = s.value();
          else s.skipValue();
        });
      } else s.skipValue();
    });
  } catch {
    return undefined;
  }
  return out;
}
