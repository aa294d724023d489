import t from 'tap';
import { OlmAnnotation } from '../../shared/api/codes.js';
import type { KubeObject } from '../../shared/kube/client.js';
import {
  bundleCsv,
  createNamespace,
  createOperatorGroup,
  installCsv,
  startMultitenancy,
  waitForObject,
} from '../harness/multitenancy.js';

const og = { kind: 'OperatorGroup', apiVersion: 'operators.coreos.com/v1' };
const ns = (name: string) => ({ kind: 'Namespace', apiVersion: 'v1', name });
const csvRef = (namespace: string, name: string) => ({
  kind: 'ClusterServiceVersion',
  apiVersion: 'operators.coreos.com/v1alpha1',
  namespace,
  name,
});
type Group = KubeObject & { status?: { namespaces?: string[]; lastUpdated?: string } };
const targetsOf = (g: Group | undefined) => [...(g?.status?.namespaces ?? [])].sort().join(',');

t.test(
  'rbac - a selector group follows namespaces as they come, change labels and go: status, namespace labels, CSV annotations',
  async (t) => {
    const { client } = await startMultitenancy(t);
    await createNamespace(client, 'operators');
    await createNamespace(client, 'team-a', { team: 'x' });
    await createNamespace(client, 'team-b', { team: 'y' });
    const group = await createOperatorGroup(client, 'operators', 'og', {
      selector: { matchLabels: { team: 'x' } },
    });
    const uidLabel = `olm.operatorgroup.uid/${group.metadata.uid ?? ''}`;
    const ref = { ...og, namespace: 'operators', name: 'og' };

    const first = await waitForObject<Group>(
      client,
      'status.namespaces = [team-a]',
      ref,
      (g) => targetsOf(g) === 'team-a',
    );
    t.ok(first?.status?.lastUpdated, 'lastUpdated is set');
    await waitForObject(
      client,
      'team-a labelled',
      ns('team-a'),
      (n) => n?.metadata.labels?.[uidLabel] === '',
    );

    const csv = await installCsv(
      client,
      await bundleCsv('prometheus', 'prometheusoperator.0.22.2'),
      'operators',
    );
    await waitForObject(
      client,
      'CSV annotated with its group',
      csvRef('operators', csv.metadata.name ?? ''),
      (c) => {
        const a = c?.metadata.annotations ?? {};
        return (
          a[OlmAnnotation.OperatorGroup] === 'og' &&
          a[OlmAnnotation.OperatorNamespace] === 'operators' &&
          a[OlmAnnotation.TargetNamespaces] === 'team-a'
        );
      },
    );

    // A namespace arrives with the label; another is relabelled into the group.
    await createNamespace(client, 'team-c', { team: 'x' });
    await client.patch({ apiVersion: 'v1', kind: 'Namespace', name: 'team-b' }, 'merge', {
      metadata: { labels: { team: 'x' } },
    });
    await waitForObject<Group>(
      client,
      'three targets',
      ref,
      (g) => targetsOf(g) === 'team-a,team-b,team-c',
    );
    await waitForObject(
      client,
      'team-b labelled',
      ns('team-b'),
      (n) => n?.metadata.labels?.[uidLabel] === '',
    );
    await waitForObject(
      client,
      'annotation follows',
      csvRef('operators', csv.metadata.name ?? ''),
      (c) => c?.metadata.annotations?.[OlmAnnotation.TargetNamespaces] === 'team-a,team-b,team-c',
    );

    // Relabelled out, and deleted.
    await client.patch({ apiVersion: 'v1', kind: 'Namespace', name: 'team-a' }, 'merge', {
      metadata: { labels: { team: 'z' } },
    });
    await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: 'team-c' });
    await waitForObject<Group>(client, 'only team-b left', ref, (g) => targetsOf(g) === 'team-b');
    await waitForObject(
      client,
      'team-a label removed',
      ns('team-a'),
      (n) => n?.metadata.labels?.[uidLabel] === undefined,
    );
    t.pass('targets, labels and annotations followed every change');
  },
);

t.test(
  'rbac - a global group targets [""] and labels no namespace; explicit targets win over a selector',
  async (t) => {
    const { client } = await startMultitenancy(t);
    await createNamespace(client, 'global');
    await createNamespace(client, 'scoped');
    await createNamespace(client, 'x1', { pick: 'me' });
    const global = await createOperatorGroup(client, 'global', 'all');
    await createOperatorGroup(client, 'scoped', 'explicit', {
      targetNamespaces: ['x1', 'scoped'],
      selector: { matchLabels: { pick: 'nobody' } },
    });
    await waitForObject<Group>(
      client,
      'global targets ""',
      { ...og, namespace: 'global', name: 'all' },
      (g) => g?.status?.namespaces?.length === 1 && g.status.namespaces[0] === '',
    );
    await waitForObject<Group>(
      client,
      'explicit targets',
      { ...og, namespace: 'scoped', name: 'explicit' },
      (g) => targetsOf(g) === 'scoped,x1',
    );
    const x1 = await waitForObject(
      client,
      'x1 labelled by the explicit group only',
      ns('x1'),
      (n) =>
        Object.keys(n?.metadata.labels ?? {}).some((k) => k.startsWith('olm.operatorgroup.uid/')),
    );
    t.equal(
      x1?.metadata.labels?.[`olm.operatorgroup.uid/${global.metadata.uid ?? ''}`],
      undefined,
      'no label for the global group',
    );
  },
);

t.test(
  'rbac - two groups in one namespace both get MultipleOperatorGroup; removing one clears it',
  async (t) => {
    const { client } = await startMultitenancy(t);
    await createNamespace(client, 'dup');
    await createOperatorGroup(client, 'dup', 'one');
    await createOperatorGroup(client, 'dup', 'two');
    type WithConditions = KubeObject & {
      status?: { conditions?: { type: string; status: string; reason: string; message: string }[] };
    };
    const has = (g: WithConditions | undefined) =>
      g?.status?.conditions?.some(
        (c) =>
          c.type === 'MultipleOperatorGroup' &&
          c.status === 'True' &&
          c.reason === 'MultipleOperatorGroupsFound' &&
          c.message === 'Multiple OperatorGroup found in the same namespace',
      ) === true;
    await waitForObject<WithConditions>(
      client,
      'one flagged',
      { ...og, namespace: 'dup', name: 'one' },
      has,
    );
    await waitForObject<WithConditions>(
      client,
      'two flagged',
      { ...og, namespace: 'dup', name: 'two' },
      has,
    );
    await client.delete({ ...og, namespace: 'dup', name: 'two' });
    await waitForObject<WithConditions>(
      client,
      'one cleared',
      { ...og, namespace: 'dup', name: 'one' },
      (g) => g !== undefined && !has(g),
    );
    t.pass();
  },
);

t.test(
  'rbac - serviceAccountName: missing SA gives the condition; once it exists it is labelled and referenced',
  async (t) => {
    const { client } = await startMultitenancy(t);
    await createNamespace(client, 'scoped');
    await createOperatorGroup(client, 'scoped', 'og', {
      serviceAccountName: 'installer',
      targetNamespaces: ['scoped'],
    });
    type WithSa = KubeObject & {
      status?: {
        serviceAccountRef?: { name?: string; uid?: string };
        conditions?: { type: string; reason: string; message: string }[];
      };
    };
    const ref = { ...og, namespace: 'scoped', name: 'og' };
    await waitForObject<WithSa>(
      client,
      'ServiceAccountNotFound',
      ref,
      (g) =>
        g?.status?.conditions?.some(
          (c) =>
            c.type === 'OperatorGroupServiceAccount' &&
            c.reason === 'ServiceAccountNotFound' &&
            c.message === 'ServiceAccount installer not found',
        ) === true,
    );
    const sa = await client.create<KubeObject>({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'installer', namespace: 'scoped' },
    });
    // The group is looked at again on its own (the SA is not olm.managed yet, so not mirrored).
    const done = await waitForObject<WithSa>(
      client,
      'serviceAccountRef set',
      ref,
      (g) => g?.status?.serviceAccountRef?.uid === sa.metadata.uid,
      30_000,
    );
    t.notOk(
      done?.status?.conditions?.some((c) => c.type === 'OperatorGroupServiceAccount'),
      'condition removed',
    );
    await waitForObject(
      client,
      'SA labelled olm.managed',
      { kind: 'ServiceAccount', apiVersion: 'v1', namespace: 'scoped', name: 'installer' },
      (s) => s?.metadata.labels?.['olm.managed'] === 'true',
    );
  },
);
