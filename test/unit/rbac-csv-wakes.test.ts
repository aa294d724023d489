// Which changes of an operator's own CSV wake the rbac function's CSV and groups items: what the
// trigger remembers is kept as the trigger loop keeps it (parts asked about, views derived).
import t from 'tap';
import {
  partsDiffer,
  pickParts,
  serializeByParts,
  viewEntry,
  viewSame,
  type ObjectPart,
} from '../../shared/bus/object-parts.js';
import type { CsvObject } from '../../shared/operator-group/index.js';
import { ownCsvWork } from '../../functions/rbac/csv-definition.js';

const ref = { cluster: 'c1', kind: 'ClusterServiceVersion', namespace: 'ns1', name: 'op.v1' };

// Looks at successive versions of one CSV as one trigger replica does; returns the queues woken.
function looker(): (csv: CsvObject | undefined) => string[] {
  let remembered: string | undefined;
  return (csv) => {
    const signature = csv === undefined ? undefined : serializeByParts(csv).signature;
    const asked = new Set<ObjectPart>();
    const views = new Map<string, string>();
    const change = {
      ref,
      object: csv,
      touches: (parts: readonly ObjectPart[]) => {
        for (const p of parts) asked.add(p);
        return csv === undefined || partsDiffer(remembered, signature, parts);
      },
      differs: (view: string, value: string) => {
        views.set(view, value);
        return csv === undefined || !viewSame(remembered, view, value);
      },
    };
    const items = ownCsvWork(change, csv);
    remembered =
      signature === undefined
        ? undefined
        : [pickParts(signature, asked), ...[...views].map(([v, x]) => viewEntry(v, x))].join(' ');
    return items.map((i) => i.queue).sort();
  };
}

const csv = (phase: string, reason = '', extra: Record<string, unknown> = {}): CsvObject => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'ClusterServiceVersion',
  metadata: { name: 'op.v1', namespace: 'ns1', annotations: { a: '1' } },
  spec: { version: '1.0.0' },
  status: { phase, reason, conditions: [{ phase, reason }] },
  ...extra,
});

const both = ['rbac-csv', 'rbac-groups'];

t.test('rbac csv trigger - phases neither decision tells apart start no work', (t) => {
  const look = looker();
  t.same(look(csv('')), both, 'never looked at');
  t.same(look(csv('Pending', 'RequirementsUnknown')), [], 'new to Pending: both still waiting');
  t.same(look(csv('InstallReady', 'AllRequirementsMet')), ['rbac-groups'], 'out of Pending');
  t.same(look(csv('Installing', 'InstallWaiting')), [], 'installing');
  t.same(look(csv('Installing', 'InstallSucceeded')), [], 'a reason of no concern');
  t.same(look(csv('Succeeded', 'InstallSucceeded')), ['rbac-csv'], 'succeeded: per-API roles');
  t.end();
});

t.test('rbac csv trigger - what the decisions read still wakes them', (t) => {
  const look = looker();
  look(csv('Succeeded', 'InstallSucceeded'));
  const annotated = csv('Succeeded', 'InstallSucceeded');
  annotated.metadata.annotations = { a: '2' };
  t.same(look(annotated), both, 'an annotation');
  const respecced = csv('Succeeded', 'InstallSucceeded', { spec: { version: '1.0.1' } });
  respecced.metadata.annotations = { a: '2' };
  t.same(look(respecced), both, 'the spec');
  const failed = (reason: string) => {
    const c = csv('Failed', reason, { spec: { version: '1.0.1' } });
    c.metadata.annotations = { a: '2' };
    return c;
  };
  t.same(look(failed('InterOperatorGroupOwnerConflict')), both, 'failed on a conflict');
  t.same(
    look(failed('CannotModifyStaticOperatorGroupProvidedAPIs')),
    both,
    'failed for another conflict',
  );
  t.same(look(failed('InstallCheckFailed')), both, 'failed for a reason the groups ignore');
  t.same(look(undefined), both, 'deleted');
  t.end();
});
