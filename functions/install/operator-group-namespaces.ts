// OperatorGroup target namespaces (spec §4.1). Computed here until the rbac function owns
// OperatorGroup status; kept separate so it can move there whole. Pure.
import type { KubeObject } from '../../shared/kube/client.js';

interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** Whether `labels` match a Kubernetes label selector. */
export function selectorMatches(
  selector: LabelSelector,
  labels: Readonly<Record<string, string>>,
): boolean {
  for (const [k, v] of Object.entries(selector.matchLabels ?? {}))
    if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, e.key);
    const value = labels[e.key];
    switch (e.operator) {
      case 'In':
        if (!has || !(e.values ?? []).includes(value ?? '')) return false;
        break;
      case 'NotIn':
        if (has && (e.values ?? []).includes(value ?? '')) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** An OperatorGroup's target namespaces: explicit list, [""] for all, or the selector's matches. */
export function operatorGroupTargets(
  group: KubeObject,
  namespaces: readonly KubeObject[],
): string[] {
  const spec = (group['spec'] ?? {}) as { targetNamespaces?: string[]; selector?: LabelSelector };
  if (spec.targetNamespaces !== undefined && spec.targetNamespaces.length > 0) {
    return [...new Set(spec.targetNamespaces)].sort();
  }
  const selector = spec.selector;
  if (
    selector === undefined ||
    (Object.keys(selector.matchLabels ?? {}).length === 0 &&
      (selector.matchExpressions ?? []).length === 0)
  ) {
    return [''];
  }
  return namespaces
    .filter((n) => selectorMatches(selector, n.metadata.labels ?? {}))
    .map((n) => n.metadata.name ?? '')
    .sort();
}

/** Whether an OperatorGroup's selector needs the namespace list to compute targets. */
export function needsNamespaces(group: KubeObject): boolean {
  const spec = (group['spec'] ?? {}) as { targetNamespaces?: string[]; selector?: LabelSelector };
  return (spec.targetNamespaces ?? []).length === 0 && spec.selector !== undefined;
}
