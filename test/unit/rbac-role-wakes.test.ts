// Which work a change of an operator's Role starts: rbac-csv only where a group lifts the Roles
// to ClusterRoles (AllNamespaces), rbac-tenants only where a group targets other namespaces.
// An operator of its own namespace alone (most installs) starts neither.
import t from 'tap';
import { tenantsDefinition } from '../../functions/rbac/tenants-definition.js';
import type { OperatorGroupObject, RbacContext } from '../../functions/rbac/types.js';
import type { ObjectChange } from '../../shared/runtime/types.js';

const group = (namespaces: string[] | undefined) =>
  ({
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name: 'og', namespace: 'ops' },
    spec: {},
    ...(namespaces === undefined ? {} : { status: { namespaces } }),
  }) as unknown as OperatorGroupObject;

const workFor = async (groups: OperatorGroupObject[], object: unknown): Promise<string[]> => {
  const context = {
    groups: {
      list: (cluster: string, namespace?: string) =>
        Promise.resolve(
          cluster === 'c1' ? groups.filter((g) => g.metadata.namespace === namespace) : [],
        ),
      stop: () => undefined,
    },
  } as unknown as RbacContext;
  const trigger = tenantsDefinition(context).triggers[0];
  if (trigger === undefined) throw new Error('rbac-tenants has no trigger');
  const change: ObjectChange = {
    ref: { cluster: 'c1', kind: 'Role', namespace: 'ops', name: 'op.v1-0' },
    object,
    touches: () => true,
    differs: () => true,
  };
  return (await trigger.workKeys(change)).map((item) => `${item.queue} ${item.key.join('/')}`);
};

const role = (labels: Record<string, string>) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'Role',
  metadata: { name: 'op.v1-0', namespace: 'ops', labels },
});
const ownedBy = {
  'olm.owner': 'op.v1',
  'olm.owner.namespace': 'ops',
  'olm.owner.kind': 'ClusterServiceVersion',
};

t.test(
  'rbac role wakes - what an operator Role change starts, by its groups targets',
  async (t) => {
    const owned = role(ownedBy);
    t.same(await workFor([group([''])], owned), ['rbac-csv ops/op.v1'], 'AllNamespaces: lifted');
    t.same(await workFor([group(['ops'])], owned), [], 'its own namespace alone: nothing');
    t.same(
      await workFor([group(['ops', 'tenant'])], owned),
      ['rbac-tenants ops/op.v1'],
      'other namespaces: its tenants',
    );
    t.same(await workFor([group(undefined)], owned), [], 'no targets yet: nothing');
    t.same(await workFor([], owned), [], 'no group: nothing');
    t.same(await workFor([group([''])], role({})), [], 'not an operator Role');
    t.same(
      await workFor([group([''])], role({ ...ownedBy, 'olm.copiedFrom': 'ops' })),
      [],
      'tenant RBAC of a copy',
    );
    t.same(
      await workFor([group([''])], undefined),
      ['rbac-namespace ops'],
      'deleted: its namespace',
    );
  },
);
