import t from 'tap';
import {
  copyPrototype,
  danglingReason,
  decideNamespaceCopies,
  isCopiable,
  nonStatusCopyHashAnnotation,
  nonStatusHash,
  type NamespaceCopySnapshot,
} from '../../functions/copy-csv/copy.js';
import {
  decideOlmConfig,
  disabledCopiedCsvsCondition,
} from '../../functions/copy-csv/olmconfig.js';
import { decideCsv, withPhase, type CsvSnapshot } from '../../functions/rbac/csv.js';
import type { CsvObject } from '../../shared/operator-group/index.js';

const source = (phase = 'Succeeded', reason = 'InstallSucceeded', targets = ''): CsvObject => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'ClusterServiceVersion',
  metadata: {
    name: 'op.v1',
    namespace: 'ops',
    uid: 'src',
    resourceVersion: '5',
    labels: { 'operators.coreos.com/op.ops': '', 'olm.api.abc': 'provided' },
    annotations: {
      'olm.operatorGroup': 'og',
      'olm.operatorNamespace': 'ops',
      'olm.targetNamespaces': targets,
      'kubectl.kubernetes.io/last-applied-configuration': '{}',
      keep: 'me',
    },
  },
  spec: { displayName: 'Op', version: '1.0.0' },
  status: { phase, reason, message: 'm', lastUpdateTime: '2026-01-01T00:00:00Z' },
});
const global = {
  metadata: { name: 'og', namespace: 'ops', uid: 'g' },
  status: { namespaces: [''] },
};

const snapshot = (over: Partial<NamespaceCopySnapshot> = {}): NamespaceCopySnapshot => ({
  namespace: 'app',
  namespaceActive: true,
  copiesEnabled: true,
  protectedNamespaces: [],
  groups: [global],
  candidates: [source()],
  present: [],
  parents: new Map(),
  ...over,
});

t.test('copy-csv prototype - annotations, labels and status as upstream', (t) => {
  const copy = copyPrototype(source());
  t.same(
    copy.metadata.annotations,
    { 'olm.operatorGroup': 'og', 'olm.operatorNamespace': 'ops', keep: 'me' },
    'targets and last-applied stripped',
  );
  t.same(
    copy.metadata.labels,
    { 'olm.api.abc': 'provided', 'olm.copiedFrom': 'ops' },
    'operators.coreos.com/* dropped, copiedFrom added',
  );
  t.equal(copy.status?.reason, 'Copied');
  t.equal(copy.status?.phase, 'Succeeded', 'phase mirrored');
  t.equal(copy.status?.message, 'The operator is running in ops but is managing this namespace');
  t.equal(
    nonStatusHash(copy),
    nonStatusHash(copyPrototype(source('Failed'))),
    'status does not change the non-status hash',
  );
  t.end();
});

t.test('copy-csv copiable - phase None and group failures are not copied', (t) => {
  t.ok(isCopiable(source()));
  t.notOk(isCopiable(source('')));
  for (const reason of [
    'Copied',
    'InvalidInstallModes',
    'NoTargetNamespaces',
    'UnsupportedOperatorGroup',
    'NoOperatorGroup',
    'TooManyOperatorGroups',
    'InterOperatorGroupOwnerConflict',
    'CannotModifyStaticOperatorGroupProvidedAPIs',
  ]) {
    t.notOk(isCopiable(source('Failed', reason)), reason);
  }
  t.end();
});

t.test(
  'copy-csv decision - a missing copy is created then given its status; an equal one causes no write',
  (t) => {
    const d = decideNamespaceCopies(snapshot());
    t.same(
      d.writes.map((w) => w.op),
      ['create', 'updateStatus'],
    );
    const created = d.writes[0]?.op === 'create' ? d.writes[0].object : undefined;
    t.equal(created?.metadata.namespace, 'app');
    t.ok(created?.metadata.annotations?.[nonStatusCopyHashAnnotation]);
    t.equal(created?.['status'], undefined, 'status goes through the status subresource');
    const existing: CsvObject = {
      ...(created as CsvObject),
      metadata: { ...created?.metadata, uid: 'c', resourceVersion: '9' },
      status: copyPrototype(source()).status ?? {},
    };
    t.same(
      decideNamespaceCopies(
        snapshot({ present: [existing], parents: new Map([['ops/op.v1', source()]]) }),
      ).writes,
      [],
      'hashes equal: nothing to write',
    );
    const changedParent = source('Failed', 'ComponentUnhealthy');
    const again = decideNamespaceCopies(
      snapshot({
        candidates: [changedParent],
        present: [existing],
        parents: new Map([['ops/op.v1', changedParent]]),
      }),
    );
    t.same(
      again.writes.map((w) => w.op),
      ['updateStatus'],
      'a status change is one status write',
    );
    t.end();
  },
);

t.test(
  'copy-csv decision - OwnNamespace groups, the group namespace and uncopiable sources get no copy',
  (t) => {
    const own = { metadata: { name: 'og', namespace: 'ops' }, status: { namespaces: ['ops'] } };
    t.same(
      decideNamespaceCopies(
        snapshot({ groups: [own], candidates: [source('Succeeded', 'InstallSucceeded', 'ops')] }),
      ).writes,
      [],
    );
    t.same(decideNamespaceCopies(snapshot({ namespace: 'ops' })).writes, []);
    t.same(
      decideNamespaceCopies(snapshot({ candidates: [source('Failed', 'NoOperatorGroup')] })).writes,
      [],
    );
    t.same(
      decideNamespaceCopies(snapshot({ namespaceActive: false })).writes,
      [],
      'a terminating namespace gets nothing',
    );
    const mismatch = source('Succeeded', 'InstallSucceeded', 'stale');
    t.same(
      decideNamespaceCopies(snapshot({ candidates: [mismatch] })).writes,
      [],
      'stale targets annotation: not an active member yet',
    );
    t.end();
  },
);

t.test('copy-csv dangling - every deletion rule', (t) => {
  const copy: CsvObject = {
    ...copyPrototype(source()),
    metadata: { ...copyPrototype(source()).metadata, namespace: 'app', uid: 'c' },
  };
  const s = { copiesEnabled: true, protectedNamespaces: [] as string[], namespace: 'app' };
  t.equal(
    danglingReason({ ...copy, metadata: { ...copy.metadata, annotations: {} } }, source(), s),
    'no-operator-namespace',
  );
  t.equal(danglingReason(copy, undefined, s), 'parent-gone');
  t.equal(
    danglingReason(copy, source('Failed', 'InterOperatorGroupOwnerConflict'), s),
    'parent-conflict',
  );
  t.equal(danglingReason(copy, source('Succeeded', 'InstallSucceeded', 'x,y'), s), 'not-targeted');
  t.equal(danglingReason(copy, source(), { ...s, copiesEnabled: false }), 'copies-disabled');
  t.equal(
    danglingReason(copy, source(), { ...s, copiesEnabled: false, protectedNamespaces: ['app'] }),
    undefined,
    'protected namespaces keep copies',
  );
  t.equal(danglingReason(copy, source(), s), undefined);
  const d = decideNamespaceCopies(
    snapshot({ candidates: [], present: [copy], parents: new Map() }),
  );
  t.same(d.deleted, [{ name: 'op.v1', reason: 'parent-gone' }]);
  t.same(d.writes[0], {
    op: 'delete',
    ref: {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'ClusterServiceVersion',
      namespace: 'app',
      name: 'op.v1',
    },
    preconditions: { uid: 'c' },
  });
  t.end();
});

t.test('copy-csv olmconfig - condition table and Events', (t) => {
  t.same(disabledCopiedCsvsCondition(true, false), {
    type: 'DisabledCopiedCSVs',
    status: 'False',
    reason: 'CopiedCSVsEnabled',
    message: 'Copied CSVs are enabled and present across the cluster',
  });
  t.equal(
    disabledCopiedCsvsCondition(true, true).message,
    'Copied CSVs are enabled and at least one copied CSVs is missing',
  );
  t.same(disabledCopiedCsvsCondition(false, false).status, 'True');
  t.equal(disabledCopiedCsvsCondition(false, true).status, 'False');
  const config = {
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OLMConfig',
    metadata: { name: 'cluster' },
    spec: { features: { disableCopiedCSVs: true } },
  };
  const d = decideOlmConfig({
    config,
    namespaceCount: 3,
    protectedNamespaces: [],
    sources: [{ csv: source(), copies: ['a'] }],
    events: [],
    now: 'T',
  });
  t.same(
    d.requeueSources,
    [{ namespace: 'ops', name: 'op.v1' }],
    'an unexpected copy requeues its source',
  );
  const event = d.writes.find((w) => w.op === 'create');
  t.equal(
    event?.op === 'create' ? event.object['message'] : undefined,
    'CSV copying disabled for ops/op.v1',
  );
  t.ok(d.recheckAfterMs, 'looks again while copies are out of line');
  const enabled = decideOlmConfig({
    config: { ...config, spec: {} },
    namespaceCount: 3,
    protectedNamespaces: [],
    sources: [{ csv: source(), copies: ['a', 'b'] }],
    events: [],
    now: 'T',
  });
  t.same(enabled.requeueSources, [], 'all namespaces but the operator’s have a copy');
  t.end();
});

t.test('rbac csv decision - conflicts fail the CSV once, recovery moves it to Pending', (t) => {
  const csv: CsvObject = {
    ...source(),
    metadata: {
      ...source().metadata,
      annotations: {
        'olm.operatorGroup': 'og',
        'olm.operatorNamespace': 'ops',
        'olm.targetNamespaces': 'ops',
      },
    },
    spec: { customresourcedefinitions: { owned: [{ name: 'as.g', version: 'v1', kind: 'A' }] } },
  };
  const mine = {
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name: 'og', namespace: 'ops', annotations: {} },
    status: { namespaces: ['ops'] },
  };
  const rival = {
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name: 'r', namespace: 'other', annotations: { 'olm.providedAPIs': 'A.v1.g' } },
    status: { namespaces: [''] },
  };
  const base: CsvSnapshot = {
    namespace: 'ops',
    name: 'op.v1',
    csv,
    groups: [mine],
    allGroups: [mine, rival],
    apiObjects: new Map(),
    clusterRoles: new Map(),
    clusterRoleBindings: new Map(),
    ownedRoles: [],
    ownedRoleBindings: [],
    labelledClusterRbac: [],
    now: 'T',
  };
  const failed = decideCsv(base);
  const status =
    failed.writes[0]?.op === 'updateStatus'
      ? (failed.writes[0].object['status'] as Record<string, unknown>)
      : undefined;
  t.same(
    [status?.['phase'], status?.['reason'], status?.['message']],
    [
      'Failed',
      'InterOperatorGroupOwnerConflict',
      'intersecting operatorgroups provide the same apis',
    ],
  );
  const already = withPhase(
    csv,
    'Failed',
    'InterOperatorGroupOwnerConflict',
    'intersecting operatorgroups provide the same apis',
    'T',
  );
  t.same(
    decideCsv({ ...base, csv: already }).writes,
    [],
    'no second write while still in conflict',
  );
  const recovered = decideCsv({ ...base, csv: already, allGroups: [mine] });
  t.same(
    recovered.writes.map((w) => w.op),
    ['patch'],
    'rival gone: the group first takes the APIs',
  );
  const withApis = {
    ...mine,
    metadata: { ...mine.metadata, annotations: { 'olm.providedAPIs': 'A.v1.g' } },
  };
  const pending = decideCsv({ ...base, csv: already, groups: [withApis], allGroups: [withApis] });
  const st =
    pending.writes[0]?.op === 'updateStatus'
      ? (pending.writes[0].object['status'] as Record<string, unknown>)
      : undefined;
  t.same(
    [st?.['phase'], st?.['reason'], st?.['message']],
    [
      'Pending',
      'RequirementsUnknown',
      'OperatorGroup no longer intersecting with conflicting owner',
    ],
  );
  t.equal((st?.['conditions'] as unknown[]).length, 2, 'one condition per phase change');
  t.end();
});
