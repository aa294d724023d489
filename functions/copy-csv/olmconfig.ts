// The OLMConfig `cluster` switch spec.features.disableCopiedCSVs (upstream syncOLMConfig and
// the DisabledCopiedCSVs Events of syncCopyCSV). Pure.
import {
  ConditionStatus,
  OlmConfigConditionReason,
  OlmConfigConditionType,
} from '../../shared/api/codes.js';
import type { OlmConfigSpec } from '../../shared/api/olmconfig.js';
import type { KubeObject } from '../../shared/kube/client.js';
import type { Write } from '../../shared/kube/executor.js';
import type { CsvObject } from '../../shared/operator-group/index.js';

/** The OLMConfig as read here (spec as shared/api types it; conditions as this function writes them). */
export interface OlmConfigObject extends KubeObject {
  spec?: OlmConfigSpec;
  status?: { conditions?: Condition[] };
}

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

/** What the OLMConfig decision reads. */
export interface OlmConfigSnapshot {
  config: OlmConfigObject;
  /** Namespaces in the cluster. */
  namespaceCount: number;
  protectedNamespaces: readonly string[];
  /** Each non-copied CSV of an AllNamespaces group, with the namespaces holding a copy of it. */
  sources: { csv: CsvObject; copies: readonly string[] }[];
  /** Existing DisabledCopiedCSVs Events. */
  events: readonly KubeObject[];
  now: string;
}

/** The condition messages, as upstream words them. */
export const disabledCopiedCsvsMessages = {
  enabled: 'Copied CSVs are enabled and present across the cluster',
  enabledMissing: 'Copied CSVs are enabled and at least one copied CSVs is missing',
  disabled:
    'Copied CSVs are disabled and no unexpected copied CSVs were found for operators installed in AllNamespace mode',
  disabledFound:
    'Copied CSVs are disabled and at least one unexpected copied CSV was found for an operator installed in AllNamespace mode',
} as const;

/** The DisabledCopiedCSVs condition for a state (upstream getCopiedCSVsCondition). */
export function disabledCopiedCsvsCondition(
  enabled: boolean,
  csvIsRequeued: boolean,
): { type: string; status: string; reason: string; message: string } {
  const type = OlmConfigConditionType.DisabledCopiedCSVs;
  if (enabled) {
    return {
      type,
      status: ConditionStatus.False,
      reason: OlmConfigConditionReason.CopiedCSVsEnabled,
      message: csvIsRequeued
        ? disabledCopiedCsvsMessages.enabledMissing
        : disabledCopiedCsvsMessages.enabled,
    };
  }
  return csvIsRequeued
    ? {
        type,
        status: ConditionStatus.False,
        reason: OlmConfigConditionReason.CopiedCSVsDisabled,
        message: disabledCopiedCsvsMessages.disabledFound,
      }
    : {
        type,
        status: ConditionStatus.True,
        reason: OlmConfigConditionReason.CopiedCSVsDisabled,
        message: disabledCopiedCsvsMessages.disabled,
      };
}

/** Name of the Warning Event that says copying is disabled for a CSV (deterministic, so it is made once). */
export function disabledEventName(csvName: string): string {
  return `${csvName}.disabled-copied-csvs`;
}

/** The OLMConfig decision: status condition, Events, and sources to look at again. */
export function decideOlmConfig(s: OlmConfigSnapshot): {
  writes: Write[];
  requeueSources: { namespace: string; name: string }[];
  recheckAfterMs?: number;
} {
  const enabled = s.config.spec?.features?.disableCopiedCSVs !== true;
  const requeueSources: { namespace: string; name: string }[] = [];
  const writes: Write[] = [];
  for (const { csv, copies } of s.sources) {
    const namespace = csv.metadata.namespace ?? '';
    const name = csv.metadata.name ?? '';
    const expected = enabled
      ? copies.length === s.namespaceCount - 1
      : sameSet(
          copies,
          s.protectedNamespaces.filter((ns) => ns !== namespace),
        );
    if (!expected) requeueSources.push({ namespace, name });
    const event = s.events.find(
      (e) =>
        e.metadata.namespace === namespace &&
        (e['involvedObject'] as { name?: string } | undefined)?.name === name,
    );
    if (!enabled && event === undefined) {
      writes.push({
        op: 'create',
        object: {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { name: disabledEventName(name), namespace },
          involvedObject: {
            apiVersion: csv.apiVersion,
            kind: 'ClusterServiceVersion',
            namespace,
            name,
            uid: csv.metadata.uid ?? '',
            resourceVersion: csv.metadata.resourceVersion ?? '',
          },
          reason: OlmConfigConditionType.DisabledCopiedCSVs,
          message: `CSV copying disabled for ${namespace}/${name}`,
          type: 'Warning',
          count: 1,
          firstTimestamp: s.now,
          lastTimestamp: s.now,
          source: { component: 'operator-lifecycle-manager' },
          reportingComponent: 'operator-lifecycle-manager',
        },
      });
    }
  }
  if (enabled) {
    for (const event of s.events) {
      writes.push({
        op: 'delete',
        ref: {
          apiVersion: 'v1',
          kind: 'Event',
          namespace: event.metadata.namespace,
          name: event.metadata.name,
        },
      });
    }
  }
  const condition = disabledCopiedCsvsCondition(enabled, requeueSources.length > 0);
  const conditions = s.config.status?.conditions ?? [];
  const current = conditions.find((c) => c.type === condition.type);
  if (
    current === undefined ||
    current.status !== condition.status ||
    current.reason !== condition.reason ||
    current.message !== condition.message
  ) {
    const next: Condition = {
      ...condition,
      lastTransitionTime:
        current !== undefined && current.status === condition.status
          ? current.lastTransitionTime
          : s.now,
      ...(s.config.metadata.generation === undefined
        ? {}
        : { observedGeneration: s.config.metadata.generation }),
    };
    writes.push({
      op: 'updateStatus',
      object: {
        ...s.config,
        status: {
          ...s.config.status,
          conditions: [...conditions.filter((c) => c.type !== condition.type), next],
        },
      },
    });
  }
  return {
    writes,
    requeueSources,
    ...(requeueSources.length > 0 ? { recheckAfterMs: 5_000 } : {}),
  };
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const set = new Set(a);
  return set.size === new Set(b).size && b.every((x) => set.has(x));
}
