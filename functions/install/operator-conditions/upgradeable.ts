// The upgrade gate the CSV lifecycle applies (upstream's isOperatorUpgradeable): a CSV replacing
// one whose OperatorCondition is not Upgradeable stays Pending. Pure.
import type { Csv } from '../csv-status.js';
import { upgradeableCondition, type ServedOperatorCondition } from './types.js';

/** Whether the condition says anything about Upgradeable (override, spec or status). */
export function mentionsUpgradeable(condition: ServedOperatorCondition): boolean {
  return [
    ...(condition.spec?.overrides ?? []),
    ...(condition.spec?.conditions ?? []),
    ...(condition.status?.conditions ?? []),
  ].some((c) => c.type === upgradeableCondition);
}

/**
 * Upstream's isOperatorUpgradeable for the CSV owning `condition`: undefined when an upgrade may
 * proceed, else why not. An Upgradeable override wins; otherwise the status condition counts,
 * and only when it reflects the current generation.
 */
export function notUpgradeable(condition: ServedOperatorCondition | undefined): string | undefined {
  if (condition === undefined) return undefined;
  const override = (condition.spec?.overrides ?? []).find((c) => c.type === upgradeableCondition);
  if (override !== undefined) {
    return override.status === 'True'
      ? undefined
      : `The operator is not upgradeable: ${override.message ?? ''}`;
  }
  const current = (condition.status?.conditions ?? []).find((c) => c.type === upgradeableCondition);
  if (current === undefined) return undefined;
  if ((current.observedGeneration ?? 0) !== (condition.metadata.generation ?? 0)) {
    return `The operatorcondition status ${JSON.stringify(current.type)}=${JSON.stringify(current.status)} is outdated`;
  }
  if (current.status === 'False')
    return `The operator is not upgradeable: ${current.message ?? ''}`;
  return undefined;
}

/**
 * Why `csv` may not take over from the CSV its spec.replaces names yet (that CSV's
 * OperatorCondition is not Upgradeable), or undefined. `conditions` are by name.
 */
export function upgradeBlocked(
  csv: Csv,
  csvs: readonly Csv[],
  conditions: ReadonlyMap<string, ServedOperatorCondition> | undefined,
): string | undefined {
  const replaces = csv.spec?.replaces;
  if (typeof replaces !== 'string' || replaces === csv.metadata.name) return undefined;
  if (!csvs.some((c) => c.metadata.name === replaces)) return undefined;
  return notUpgradeable(conditions?.get(replaces));
}
