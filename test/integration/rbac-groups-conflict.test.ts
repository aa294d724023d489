// A group's status write that meets a newer group than the mirror shows (409) is decided again
// on the group read from the API: the mirror may lag, or stand still (a watcher waiting out an
// API brownout), and deciding on it again would only meet the same conflict until dead-lettered.
import t from 'tap';
import type { KubeObject } from '../../shared/kube/client.js';
import {
  createNamespace,
  createOperatorGroup,
  startMultitenancy,
  waitForObject,
} from '../harness/multitenancy.js';
import { stallWatcherWatch } from '../harness/watcher.js';

type Group = KubeObject & { status?: { namespaces?: string[] } };
const targetsOf = (g: Group | undefined) => [...(g?.status?.namespaces ?? [])].sort().join(',');

t.test(
  "rbac - a group's status write that conflicts is decided again on the API's group, however stale the mirror",
  async (t) => {
    const { client, fixture, lines } = await startMultitenancy(t);
    await createNamespace(client, 'operators');
    await createNamespace(client, 'team-a', { team: 'x' });
    await createOperatorGroup(client, 'operators', 'og', {
      selector: { matchLabels: { team: 'x' } },
    });
    const ref = {
      kind: 'OperatorGroup',
      apiVersion: 'operators.coreos.com/v1',
      namespace: 'operators',
      name: 'og',
    };
    await waitForObject<Group>(client, 'targets [team-a]', ref, (g) => targetsOf(g) === 'team-a');

    // From here on the mirror shows the group as it is now, and never the change made next.
    const stall = await stallWatcherWatch(fixture, 'operators.coreos.com/operatorgroups');
    t.teardown(() => stall.end());
    await client.patch(ref, 'merge', { metadata: { annotations: { note: 'unseen' } } });

    // A namespace joins: its reconcile hands the group on, whose status write meets the patch.
    await createNamespace(client, 'team-b', { team: 'x' });
    const group = await waitForObject<Group>(
      client,
      'targets [team-a, team-b] while the mirror still lags',
      ref,
      (g) => targetsOf(g) === 'team-a,team-b',
    );
    t.equal(group?.metadata.annotations?.['note'], 'unseen', 'the patch the mirror missed kept');
    t.ok(stall.active, 'the watch of groups was stalled throughout');
    t.same(
      lines.filter((l) => l['msg'] === 'work dead-lettered after repeated failures'),
      [],
      'nothing dead-lettered',
    );
  },
);
