// API server warnings: the HTTP `Warning` response header (RFC 7234 §5.5), which Kubernetes sends
// with code 299 for deprecated APIs, unknown fields under fieldValidation=Warn and admission
// warnings, e.g. `299 - "example.com/v1 Widget is deprecated"`.

/** One warning an answer carried. */
export interface ApiWarning {
  /** Warn-code; Kubernetes uses 299 ("miscellaneous persistent warning"). */
  code: number;
  /** Warn-agent, "-" when unnamed (Kubernetes always sends "-"). */
  agent: string;
  /** The warning text, unquoted. */
  text: string;
}

/** Called once per warning of every answer. */
export type WarningHandler = (warning: ApiWarning) => void;

/**
 * The warnings of one `Warning` header value: `code SP agent SP quoted-text [SP quoted-date]`,
 * several separated by commas. Malformed parts end the parse (what was read is kept), as
 * client-go does: a bad header must never fail the request it came with.
 */
export function parseWarningHeader(value: string): ApiWarning[] {
  const out: ApiWarning[] = [];
  let i = 0;
  const skip = (chars: string): void => {
    while (i < value.length && chars.includes(value[i] as string)) i++;
  };
  const quoted = (): string | undefined => {
    if (value[i] !== '"') return undefined;
    i++;
    let text = '';
    while (i < value.length) {
      const c = value[i] as string;
      if (c === '\\' && i + 1 < value.length) {
        text += value[i + 1];
        i += 2;
        continue;
      }
      i++;
      if (c === '"') return text;
      text += c;
    }
    return undefined; // unterminated
  };
  for (;;) {
    skip(' \t,');
    if (i >= value.length) return out;
    const code = /^\d{3}(?= )/.exec(value.slice(i, i + 4));
    if (code === null) return out;
    i += 4;
    const end = value.indexOf(' ', i);
    if (end < 0) return out;
    const agent = value.slice(i, end);
    i = end + 1;
    const text = quoted();
    if (text === undefined) return out;
    out.push({ code: Number(code[0]), agent, text });
    skip(' \t');
    if (value[i] === '"' && quoted() === undefined) return out; // warn-date
    skip(' \t');
    if (i < value.length && value[i] !== ',') return out;
  }
}
