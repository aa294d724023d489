// Labels, annotations and label selectors, as apimachinery's ValidateLabels,
// ValidateAnnotations and ValidateLabelSelector check them.
import { isJsonObject, type JsonValue } from '../../../shared/kube/json.js';
import type { StatusCause } from '../../../shared/kube/status.js';
import {
  forbidden,
  goQuote,
  goStringMap,
  goStrings,
  invalid,
  invalidEach,
  required,
  tooLong,
  type GoSyntax,
} from './field.js';
import { labelValueErrors, qualifiedNameErrors } from './identifiers.js';

/** TotalAnnotationSizeLimitB: keys and values of all annotations together. */
export const maxAnnotationBytes = 256 * 1024;

/** ValidateLabels: each key a qualified name, each value a label value; the map's path as field. */
export function validateLabels(labels: JsonValue | undefined, path: string): StatusCause[] {
  if (!isJsonObject(labels)) return [];
  const causes: StatusCause[] = [];
  // Go ranges over the map in random order; sorted keys make the answer stable.
  for (const key of Object.keys(labels).sort()) {
    causes.push(...invalidEach(path, key, qualifiedNameErrors(key)));
    const value = labels[key];
    if (typeof value === 'string')
      causes.push(...invalidEach(path, value, labelValueErrors(value)));
  }
  return causes;
}

/** ValidateAnnotations: keys qualified names (any case), 256 KiB in all. */
export function validateAnnotations(
  annotations: JsonValue | undefined,
  path: string,
): StatusCause[] {
  if (!isJsonObject(annotations)) return [];
  const causes: StatusCause[] = [];
  let size = 0;
  for (const key of Object.keys(annotations).sort()) {
    causes.push(...invalidEach(path, key, qualifiedNameErrors(key.toLowerCase())));
    const value = annotations[key];
    size += Buffer.byteLength(key) + (typeof value === 'string' ? Buffer.byteLength(value) : 0);
  }
  if (size > maxAnnotationBytes) causes.push(tooLong(path, maxAnnotationBytes));
  return causes;
}

/** ValidateLabelSelector: matchLabels, and each matchExpressions entry's operator, key and values. */
export function validateLabelSelector(
  selector: JsonValue | undefined,
  path: string,
): StatusCause[] {
  if (!isJsonObject(selector)) return [];
  const causes = validateLabels(selector['matchLabels'], `${path}.matchLabels`);
  const expressions = selector['matchExpressions'];
  (Array.isArray(expressions) ? expressions : []).forEach((expression, i) => {
    const at = `${path}.matchExpressions[${i}]`;
    const entry = isJsonObject(expression) ? expression : {};
    const values = Array.isArray(entry['values']) ? entry['values'] : [];
    const operator = typeof entry['operator'] === 'string' ? entry['operator'] : '';
    if (operator === 'In' || operator === 'NotIn') {
      if (values.length === 0)
        causes.push(
          required(`${at}.values`, "must be specified when `operator` is 'In' or 'NotIn'"),
        );
    } else if (operator === 'Exists' || operator === 'DoesNotExist') {
      if (values.length > 0)
        causes.push(
          forbidden(
            `${at}.values`,
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
          ),
        );
    } else {
      causes.push(invalid(`${at}.operator`, operator, 'not a valid selector operator'));
    }
    const key = typeof entry['key'] === 'string' ? entry['key'] : '';
    causes.push(...invalidEach(`${at}.key`, key, qualifiedNameErrors(key)));
    values.forEach((value, j) => {
      if (typeof value === 'string')
        causes.push(...invalidEach(`${at}.values[${j}]`, value, labelValueErrors(value)));
    });
  });
  return causes;
}

/** Whether a selector has neither matchLabels nor matchExpressions entries. */
export function isEmptySelector(selector: JsonValue | undefined): boolean {
  if (!isJsonObject(selector)) return true;
  const labels = selector['matchLabels'];
  const expressions = selector['matchExpressions'];
  return (
    (!isJsonObject(labels) || Object.keys(labels).length === 0) &&
    (!Array.isArray(expressions) || expressions.length === 0)
  );
}

/** Go's %#v of a metav1.LabelSelector, as kube prints a selector it rejects. */
export function goLabelSelector(selector: JsonValue | undefined): GoSyntax {
  if (!isJsonObject(selector)) return { goSyntax: 'null' };
  const labels = selector['matchLabels'];
  const expressions = selector['matchExpressions'];
  const requirements = Array.isArray(expressions)
    ? `[]v1.LabelSelectorRequirement{${expressions
        .map((e) => {
          const r = isJsonObject(e) ? e : {};
          const values = Array.isArray(r['values'])
            ? goStrings(r['values'].map((v) => (typeof v === 'string' ? v : ''))).goSyntax
            : '[]string(nil)';
          return `v1.LabelSelectorRequirement{Key:${goQuote(text(r['key']))}, Operator:${goQuote(text(r['operator']))}, Values:${values}}`;
        })
        .join(', ')}}`
    : '[]v1.LabelSelectorRequirement(nil)';
  return {
    goSyntax: `v1.LabelSelector{MatchLabels:${goStringMap(isJsonObject(labels) ? labels : undefined)}, MatchExpressions:${requirements}}`,
  };
}

function text(value: JsonValue | undefined): string {
  return typeof value === 'string' ? value : '';
}
