// `.indexignore` files: gitignore-style patterns, each file scoped to the folder holding it,
// as operator-registry honours them when it walks a catalog directory.

/** A compiled set of ignore patterns from one `.indexignore` file. */
export interface IgnoreRules {
  /** Whether a path (relative to the `.indexignore`'s folder, '/'-separated) is ignored. */
  readonly ignores: (relativePath: string, isDirectory: boolean) => boolean;
}

interface Rule {
  readonly negated: boolean;
  readonly directoryOnly: boolean;
  readonly anchored: boolean;
  readonly pattern: RegExp;
}

/** Compiles the text of an `.indexignore` file. */
export function compileIgnoreRules(text: string): IgnoreRules {
  const rules: Rule[] = [];
  for (const rawLine of text.split(/\r?\n/)) {
    let line = rawLine.replace(/(?<!\\)\s+$/, '');
    if (line === '' || line.startsWith('#')) continue;
    const negated = line.startsWith('!');
    if (negated) line = line.slice(1);
    if (line.startsWith('\\')) line = line.slice(1);
    const directoryOnly = line.endsWith('/');
    if (directoryOnly) line = line.slice(0, -1);
    const anchored = line.includes('/');
    if (line.startsWith('/')) line = line.slice(1);
    if (line === '') continue;
    rules.push({ negated, directoryOnly, anchored, pattern: new RegExp(`^${globToRegex(line)}$`) });
  }
  return {
    ignores(relativePath, isDirectory) {
      const base = relativePath.slice(relativePath.lastIndexOf('/') + 1);
      let ignored = false;
      for (const rule of rules) {
        if (rule.directoryOnly && !isDirectory) continue;
        if (rule.pattern.test(rule.anchored ? relativePath : base)) ignored = !rule.negated;
      }
      return ignored;
    },
  };
}

function globToRegex(glob: string): string {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] ?? '';
    if (c === '*') {
      if (glob[i + 1] === '*') {
        const slashAfter = glob[i + 2] === '/';
        out += slashAfter ? '(?:.*/)?' : '.*';
        i += slashAfter ? 2 : 1;
      } else out += '[^/]*';
    } else if (c === '?') out += '[^/]';
    else if (c === '[') {
      const close = glob.indexOf(']', i + 1);
      if (close === -1) out += '\\[';
      else {
        out += `[${glob
          .slice(i + 1, close)
          .replace(/^!/, '^')
          .replace(/\\/g, '\\\\')}]`;
        i = close;
      }
    } else if (c === '\\' && i + 1 < glob.length) {
      out += escapeRegex(glob[i + 1] ?? '');
      i++;
    } else out += escapeRegex(c);
  }
  return out;
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
