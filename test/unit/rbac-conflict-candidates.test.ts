// The CSVs a group's pass sends back to the provided-API gate, and the basis of that follow-up:
// it changes with what the gate reads of groups (an intersecting group's olm.providedAPIs, its
// targets, the APIs this group's members provide), not with a member's phase.
import t from 'tap';
import { OlmAnnotation } from '../../shared/api/codes.js';
import { providedApisOf, type CsvObject } from '../../shared/operator-group/index.js';
import { conflictCandidates } from '../../functions/rbac/group-rules.js';
import type { OperatorGroupObject } from '../../functions/rbac/types.js';

const group = (namespace: string, targets: string[], providedApis = ''): OperatorGroupObject => ({
  apiVersion: 'operators.coreos.com/v1',
  kind: 'OperatorGroup',
  metadata: {
    name: 'og',
    namespace,
    uid: `uid-${namespace}`,
    annotations: { [OlmAnnotation.ProvidedAPIs]: providedApis },
  },
  spec: { targetNamespaces: targets },
  status: { namespaces: targets, lastUpdated: '2026-01-01T00:00:00Z' },
});

const csv = (namespace: string, kind: string, phase = 'Pending'): CsvObject => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'ClusterServiceVersion',
  metadata: { name: `${kind.toLowerCase()}.v1`, namespace },
  spec: {
    customresourcedefinitions: {
      owned: [{ name: `${kind.toLowerCase()}s.example.com`, version: 'v1', kind }],
    },
  },
  status: { phase },
});

const candidates = (groups: OperatorGroupObject[], members: CsvObject[]) => {
  const apis = members.reduce((all, c) => all.union(providedApisOf(c)), providedApisOf({}));
  return conflictCandidates(groups, groups[0]!, members, apis, []);
};

t.test('rbac conflict candidates - providers of the group APIs, with one basis', (t) => {
  const a = group('a', ['a'], 'Widget.v1.example.com');
  const [first] = candidates([a], [csv('a', 'Widget')]);
  t.match(first, { namespace: 'a', name: 'widget.v1' }, 'the provider');
  t.type(first?.basis, 'string');

  const succeeded = candidates([a], [csv('a', 'Widget', 'Succeeded')]);
  t.equal(succeeded[0]?.basis, first?.basis, 'a member phase change: the same basis');

  const other = group('b', ['a', 'b'], 'Gadget.v1.example.com');
  const annotated = candidates([a, other], [csv('a', 'Widget')]);
  t.not(annotated[0]?.basis, first?.basis, 'an intersecting group: another basis');
  const reannotated = candidates(
    [a, group('b', ['a', 'b'], 'Gadget.v1.example.com,Widget.v1.example.com')],
    [csv('a', 'Widget')],
  );
  t.not(reannotated[0]?.basis, annotated[0]?.basis, 'its olm.providedAPIs changed: another');
  const retargeted = candidates(
    [a, group('b', ['a'], 'Gadget.v1.example.com')],
    [csv('a', 'Widget')],
  );
  t.not(retargeted[0]?.basis, annotated[0]?.basis, 'its targets changed: another');

  const aside = candidates([a, group('c', ['c'], 'Gadget.v1.example.com')], [csv('a', 'Widget')]);
  t.equal(aside[0]?.basis, first?.basis, 'a group that does not intersect: the same basis');

  const more = candidates([a], [csv('a', 'Widget'), csv('a', 'Gizmo')]);
  t.not(more[0]?.basis, first?.basis, 'another member API: another basis');
  t.end();
});
