// Operator names and component labels, as upstream's operator decorator makes them: an
// operator installed from a Subscription is `<package>.<namespace>`, and its components carry
// the label `operators.coreos.com/<name>` (the name cut to the 63 characters a label name
// allows, without trailing '.', '_' or '-').
import { codes } from '../../shared/api/index.js';

const prefix = codes.OlmLabelPrefix.Operator;

/** The Operator of `pkg` installed in `namespace`. */
export const packageOperatorName = (pkg: string, namespace: string): string =>
  namespace === '' ? pkg : `${pkg}.${namespace}`;

/** The component label key of the Operator `name`. */
export function componentLabelKey(name: string): string {
  let cut = name.length > 63 ? name.slice(0, 63) : name;
  while (cut.length > 0 && '._-'.includes(cut[cut.length - 1] ?? '')) cut = cut.slice(0, -1);
  return `${prefix}${cut}`;
}

/** The Operators an object is a component of: every label with the component prefix. */
export function operatorNames(labels: Readonly<Record<string, string>> | undefined): string[] {
  return Object.keys(labels ?? {})
    .filter((k) => k.startsWith(prefix))
    .map((k) => k.slice(prefix.length));
}

/** The component label keys among `labels`. */
export const componentLabelKeys = (
  labels: Readonly<Record<string, string>> | undefined,
): string[] => Object.keys(labels ?? {}).filter((k) => k.startsWith(prefix));
