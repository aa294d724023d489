// Operator names and component labels, as upstream's operator decorator makes them: an
// operator installed from a Subscription is `<package>.<namespace>`, and its components carry
// the label `operators.coreos.com/<name>` (the name cut to the 63 characters a label name
// allows, without trailing '.', '_' or '-'). The operator function keeps them (adoption); the
// functions that create an operator's objects set them at creation when they know them.
import { OlmLabelPrefix } from './codes.js';

const prefix = OlmLabelPrefix.Operator;

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

/**
 * The component label of the Operator a Subscription of package `pkg` in `namespace` installs;
 * undefined when it names no package (it is then no component).
 */
export const subscriptionLabelKey = (
  pkg: string | undefined,
  namespace: string,
): string | undefined =>
  pkg === undefined || pkg === ''
    ? undefined
    : componentLabelKey(packageOperatorName(pkg, namespace));

/** Labels of value "" under each of `keys` (undefined ones skipped), as components carry them. */
export const componentLabels = (keys: Iterable<string | undefined>): Record<string, string> =>
  Object.fromEntries([...keys].flatMap((key) => (key === undefined ? [] : [[key, '']])));

/** The component labels an object made for a CSV carries: those the CSV carries. */
export const csvComponentLabels = (csv: {
  metadata: { labels?: Readonly<Record<string, string>> | undefined };
}): Record<string, string> => componentLabels(componentLabelKeys(csv.metadata.labels));

/**
 * Kinds whose objects are components of the Operators of the CSV that owns them (by owner
 * reference in its namespace, or by owner labels anywhere): upstream's adoption labels these.
 */
export const ownableKinds: readonly string[] = [
  'Deployment',
  'Service',
  'OperatorCondition',
  'Secret',
  'ConfigMap',
  'ServiceAccount',
  'Role',
  'RoleBinding',
  'ClusterRole',
  'ClusterRoleBinding',
  'APIService',
];

const ownable: ReadonlySet<string> = new Set(ownableKinds);

/** Whether objects of `kind` are components of the Operators of the CSV that owns them. */
export const isOwnableKind = (kind: string): boolean => ownable.has(kind);
