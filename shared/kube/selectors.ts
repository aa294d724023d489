// Kubernetes label and field selectors: parsing of the query-string forms and matching, pure.

/** Operators of a label selector requirement (labels.Selector). */
export type LabelOperator = 'Equals' | 'NotEquals' | 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

/** One requirement of a label selector, e.g. `tier in (a,b)`. */
export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  values: readonly string[];
}

/** A parsed label selector: all requirements must hold (empty = everything). */
export type LabelSelector = readonly LabelRequirement[];

/** metav1.LabelSelector as it appears in objects (matchLabels/matchExpressions). */
export interface LabelSelectorObject {
  matchLabels?: Record<string, string> | undefined;
  matchExpressions?:
    | readonly { key: string; operator: string; values?: readonly string[] | undefined }[]
    | undefined;
}

/** A selector string or object that cannot be understood; `selector` is the offending input. */
export class SelectorError extends Error {
  constructor(
    message: string,
    readonly selector: string,
  ) {
    super(message);
    this.name = 'SelectorError';
  }
}

const labelKeyPattern =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const labelValuePattern = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;

/** Whether `key` is a valid label key (optional DNS-subdomain prefix, then a name of at most 63 characters). */
export function isValidLabelKey(key: string): boolean {
  return key.length <= 317 && labelKeyPattern.test(key);
}

/** Whether `value` is a valid label value (at most 63 characters, may be empty). */
export function isValidLabelValue(value: string): boolean {
  return value.length <= 63 && labelValuePattern.test(value);
}

/** Splits a selector string on commas that are not inside parentheses. */
function splitTopLevel(input: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of input) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  return parts;
}

/** Parses the string form `a=b,c!=d,e in (x,y),f notin (z),g,!h` (as labels.Parse does). */
export function parseLabelSelector(input: string): LabelSelector {
  const trimmed = input.trim();
  if (trimmed === '') return [];
  const requirements: LabelRequirement[] = [];
  for (const raw of splitTopLevel(trimmed)) {
    const part = raw.trim();
    if (part === '') throw new SelectorError(`found '', expected: identifier`, input);
    let requirement: LabelRequirement;
    const setMatch = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(part);
    if (setMatch) {
      const values = (setMatch[3] ?? '')
        .split(',')
        .map((v) => v.trim())
        .filter((v, i, all) => v !== '' || all.length > 1);
      requirement = {
        key: setMatch[1] ?? '',
        operator: setMatch[2] === 'in' ? 'In' : 'NotIn',
        values,
      };
    } else if (part.startsWith('!')) {
      requirement = { key: part.slice(1).trim(), operator: 'DoesNotExist', values: [] };
    } else {
      const eq = /^([^=!\s]+)\s*(==|=|!=)\s*(.*)$/.exec(part);
      if (eq) {
        requirement = {
          key: eq[1] ?? '',
          operator: eq[2] === '!=' ? 'NotEquals' : 'Equals',
          values: [(eq[3] ?? '').trim()],
        };
      } else if (/^\S+$/.test(part)) {
        requirement = { key: part, operator: 'Exists', values: [] };
      } else {
        throw new SelectorError(`unable to parse requirement: ${part}`, input);
      }
    }
    if (!isValidLabelKey(requirement.key)) {
      throw new SelectorError(
        `unable to parse requirement: invalid label key "${requirement.key}"`,
        input,
      );
    }
    for (const value of requirement.values) {
      if (!isValidLabelValue(value)) {
        throw new SelectorError(
          `unable to parse requirement: invalid label value: "${value}"`,
          input,
        );
      }
    }
    requirements.push(requirement);
  }
  return requirements;
}

/** Converts a metav1.LabelSelector into requirements; throws SelectorError on an unknown operator. */
export function labelSelectorFromObject(selector: LabelSelectorObject): LabelSelector {
  const requirements: LabelRequirement[] = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    requirements.push({ key, operator: 'Equals', values: [value] });
  }
  for (const expression of selector.matchExpressions ?? []) {
    const values = expression.values ?? [];
    switch (expression.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) {
          throw new SelectorError(
            `values: Required value: must be specified when \`operator\` is 'In' or 'NotIn'`,
            expression.key,
          );
        }
        requirements.push({ key: expression.key, operator: expression.operator, values });
        break;
      case 'Exists':
      case 'DoesNotExist':
        requirements.push({ key: expression.key, operator: expression.operator, values: [] });
        break;
      default:
        throw new SelectorError(
          `"${expression.operator}" is not a valid label selector operator`,
          expression.key,
        );
    }
  }
  return requirements;
}

/** Whether `labels` satisfy every requirement. */
export function matchesLabelSelector(
  selector: LabelSelector,
  labels: Readonly<Record<string, string>> | undefined,
): boolean {
  for (const requirement of selector) {
    const value = labels?.[requirement.key];
    const present = value !== undefined;
    switch (requirement.operator) {
      case 'Equals':
      case 'In':
        if (!present || !requirement.values.includes(value)) return false;
        break;
      case 'NotEquals':
      case 'NotIn':
        if (present && requirement.values.includes(value)) return false;
        break;
      case 'Exists':
        if (!present) return false;
        break;
      case 'DoesNotExist':
        if (present) return false;
        break;
    }
  }
  return true;
}

/** Renders requirements back to the string form (for messages and round trips). */
export function formatLabelSelector(selector: LabelSelector): string {
  return selector
    .map((r) => {
      switch (r.operator) {
        case 'Equals':
          return `${r.key}=${r.values[0] ?? ''}`;
        case 'NotEquals':
          return `${r.key}!=${r.values[0] ?? ''}`;
        case 'In':
          return `${r.key} in (${r.values.join(',')})`;
        case 'NotIn':
          return `${r.key} notin (${r.values.join(',')})`;
        case 'Exists':
          return r.key;
        case 'DoesNotExist':
          return `!${r.key}`;
      }
      return '';
    })
    .join(',');
}

/** One requirement of a field selector: `field=value` or `field!=value`. */
export interface FieldRequirement {
  field: string;
  operator: 'Equals' | 'NotEquals';
  value: string;
}

/** A parsed field selector (all requirements must hold). */
export type FieldSelector = readonly FieldRequirement[];

/** Parses `metadata.name=x,involvedObject.kind!=Pod` (=, == and != as fields.ParseSelector accepts). */
export function parseFieldSelector(input: string): FieldSelector {
  const trimmed = input.trim();
  if (trimmed === '') return [];
  return trimmed.split(',').map((raw) => {
    const match = /^\s*([^=!\s]+)\s*(==|=|!=)\s*(.*?)\s*$/.exec(raw);
    if (!match)
      throw new SelectorError(
        `invalid selector: '${raw.trim()}'; can't understand '${raw.trim()}'`,
        input,
      );
    return {
      field: match[1] ?? '',
      operator: match[2] === '!=' ? 'NotEquals' : 'Equals',
      value: match[3] ?? '',
    } satisfies FieldRequirement;
  });
}

/** Whether the object's field values (as given by `fieldValue`) satisfy every requirement. */
export function matchesFieldSelector(
  selector: FieldSelector,
  fieldValue: (field: string) => string | undefined,
): boolean {
  for (const requirement of selector) {
    const value = fieldValue(requirement.field) ?? '';
    if (
      requirement.operator === 'Equals' ? value !== requirement.value : value === requirement.value
    ) {
      return false;
    }
  }
  return true;
}
