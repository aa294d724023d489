// Errors of the patch room, shaped so the API server can turn them into a Kubernetes Status.

/** A patch that cannot be parsed or applied. `reason` is the Kubernetes Status reason to answer with. */
export class PatchError extends Error {
  constructor(
    message: string,
    readonly reason: 'BadRequest' | 'Invalid' | 'UnsupportedMediaType',
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'PatchError';
  }
}

/** One field an apply would take from another manager. */
export interface ApplyConflict {
  manager: string;
  /** Field path in kubectl's words, e.g. ".spec.replicas". */
  field: string;
  /** Operation of the owning managedFields entry; "Update" owners are printed with their apiVersion. */
  operation?: 'Apply' | 'Update';
  /** apiVersion of the owning managedFields entry. */
  apiVersion?: string;
  /** Subresource of the owning managedFields entry, e.g. "status". */
  subresource?: string;
}

/** Server-side apply refused because other managers own fields it sets (HTTP 409). */
export class ApplyConflictError extends Error {
  constructor(readonly conflicts: readonly ApplyConflict[]) {
    super(conflictMessage(conflicts));
    this.name = 'ApplyConflictError';
  }

  /** Status.details.causes[] as kube-apiserver lists them (type FieldManagerConflict). */
  get causes(): { type: 'FieldManagerConflict'; message: string; field: string }[] {
    return this.conflicts.map((c) => ({
      type: 'FieldManagerConflict',
      message: `conflict with ${describeOwner(c)}`,
      field: c.field,
    }));
  }
}

/** How kube-apiserver names a conflicting owner: `"kubectl" using apps/v1` for Update owners. */
function describeOwner(c: ApplyConflict): string {
  let owner = JSON.stringify(c.manager);
  if (c.subresource) owner += ` with subresource ${JSON.stringify(c.subresource)}`;
  if (c.operation === 'Update' && c.apiVersion !== undefined) owner += ` using ${c.apiVersion}`;
  return owner;
}

// kube-apiserver prints one conflict inline and several grouped by owner, owners sorted.
function conflictMessage(conflicts: readonly ApplyConflict[]): string {
  const [only] = conflicts;
  if (conflicts.length === 1 && only) {
    return `Apply failed with 1 conflict: conflict with ${describeOwner(only)}: ${only.field}`;
  }
  const byOwner = new Map<string, string[]>();
  for (const c of conflicts) {
    const owner = describeOwner(c);
    const fields = byOwner.get(owner) ?? [];
    fields.push(c.field);
    byOwner.set(owner, fields);
  }
  const lines: string[] = [];
  for (const owner of [...byOwner.keys()].sort()) {
    lines.push(`conflicts with ${owner}:`);
    for (const field of byOwner.get(owner) ?? []) lines.push(`- ${field}`);
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}
