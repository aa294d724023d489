// Go's %q for strings, so messages read byte-for-byte like kube-apiserver's.

const namedEscapes: ReadonlyMap<string, string> = new Map([
  ['\x07', '\\a'],
  ['\b', '\\b'],
  ['\f', '\\f'],
  ['\n', '\\n'],
  ['\r', '\\r'],
  ['\t', '\\t'],
  ['\v', '\\v'],
  ['\\', '\\\\'],
  ['"', '\\"'],
]);

/** `value` quoted as Go's strconv.Quote does it (printable Unicode kept, controls escaped). */
export function goQuote(value: string): string {
  let out = '"';
  for (const ch of value) {
    const named = namedEscapes.get(ch);
    const code = ch.codePointAt(0) ?? 0;
    if (named !== undefined) out += named;
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else if (code >= 0x80 && code <= 0x9f) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}
