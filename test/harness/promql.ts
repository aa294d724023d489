// The metric names a PromQL expression reads: enough of PromQL's lexical structure to find
// them (strings, label matchers, grouping clauses, ranges, functions and keywords removed).
const keywords = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'inf',
  'nan',
]);

/** Every metric name in `expr`, once each. */
export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    // Numbers and durations (offset 5m).
    .replace(/(^|[^a-zA-Z0-9_:])\d[\w.]*/g, '$1 ');
  const names = new Set<string>();
  for (const match of stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*(\s*\()?/g)) {
    const [whole, call] = match;
    const name = whole.replace(/\s*\($/, '');
    if (call !== undefined || keywords.has(name.toLowerCase())) continue;
    names.add(name);
  }
  return [...names];
}
