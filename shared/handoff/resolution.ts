// The hand-off from the resolve function to the plan function: a namespace's latest
// resolution (shared/resolver/record.ts), mirrored as the pseudo-kind `Resolution` under the
// namespace's name. It carries no timestamps: the same resolution is the same record, and an
// unchanged record is never rewritten, so nothing loops.
import { ResolutionRecordSchema, resolutionKind } from '../resolver/record.js';
import { handOffRecordType } from './record-type.js';

/** The Resolution records: checked put, read, list and delete. */
export const resolutionRecords = handOffRecordType(resolutionKind, ResolutionRecordSchema);

/** Where the resolution of `namespace` in `cluster` is kept. */
export const resolutionRef = (cluster: string, namespace: string) => ({
  cluster,
  namespace,
  name: namespace,
});
