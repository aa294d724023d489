// Field ownership (metadata.managedFields): the merge rules of each served type, kept until its
// CRD changes, and the entry a write records for its field manager.
import {
  builtinMergeRules,
  mergeRulesFromSchema,
  recordUpdate,
  type MergeRules,
} from '../patch/index.js';
import { apiVersionOf } from '../resources/registry.js';
import type { ResourceType } from '../resources/types.js';
import type { WriteOptions } from './types.js';
import type { JsonObject } from '../../shared/kube/json.js';

/** Merge rules by type: from a CRD version's schema, or kube's for built-in kinds. */
export class MergeRulesCache {
  private readonly rules = new Map<ResourceType, MergeRules>();

  /** The merge rules of a type. */
  of(type: ResourceType): MergeRules {
    let rules = this.rules.get(type);
    if (!rules) {
      rules =
        type.schema !== undefined
          ? mergeRulesFromSchema(type.schema)
          : builtinMergeRules(type.group, type.kind);
      this.rules.set(type, rules);
    }
    return rules;
  }

  /** Forgets the rules of the types a CRD served (it changed or went). */
  forgetCrd(name: string): void {
    for (const cached of [...this.rules.keys()])
      if (cached.crdName === name) this.rules.delete(cached);
  }
}

/** `after` with managedFields recording the write of `options.fieldManager` (an Update operation). */
export function recordWrite(
  type: ResourceType,
  rules: MergeRules,
  before: JsonObject | undefined,
  after: JsonObject,
  options: WriteOptions,
  subresource: string,
  now: string,
): JsonObject {
  const applyOptions = {
    manager: options.fieldManager,
    rules,
    apiVersion: apiVersionOf(type.group, type.version),
    now,
    ...(subresource !== '' ? { subresource } : {}),
  };
  return recordUpdate(before, after, applyOptions);
}
