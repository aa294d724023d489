import t from 'tap';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import { coreEvent, recordEvent } from '../../shared/kube/events.js';
import type { ApiWarning } from '../../shared/kube/warnings.js';
import { clusterFor } from '../harness/backbone.js';
import { widgetsCrd } from '../harness/devcluster.js';
import { waitFor } from '../harness/wait.js';

const crdRef = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  name: 'widgets.example.olmq.io',
};

// The test CRD with its v1alpha1 version deprecated (default wording unless `warning` is given).
async function deprecatedWidgets(client: KubeClient, warning?: string): Promise<void> {
  const crd = widgetsCrd() as KubeObject & { spec: { versions: Record<string, unknown>[] } };
  for (const v of crd.spec.versions) {
    if (v['name'] !== 'v1alpha1') continue;
    v['deprecated'] = true;
    if (warning !== undefined) v['deprecationWarning'] = warning;
  }
  await client.create(crd);
  await waitFor('the CRD to be served', async () => {
    const got = await client.get(crdRef);
    const conditions = (got?.['status'] as { conditions?: { type: string; status: string }[] })
      ?.conditions;
    return conditions?.some((c) => c.type === 'Established' && c.status === 'True');
  });
}

function collecting(client: KubeClient): { client: KubeClient; warnings: ApiWarning[] } {
  const warnings: ApiWarning[] = [];
  return { client: client.withWarningHandler((w) => warnings.push(w)), warnings };
}

const widget = (version: string, name: string): KubeObject => ({
  apiVersion: `example.olmq.io/${version}`,
  kind: 'Widget',
  metadata: { name, namespace: 'default' },
  spec: { size: 1 },
});

t.test(
  'kube client - requests for a deprecated CRD version carry kube-apiserver’s warning',
  async (t) => {
    const { client } = await clusterFor(t);
    await deprecatedWidgets(client);
    const seen = collecting(client);
    await seen.client.create(widget('v1alpha1', 'old'));
    t.same(seen.warnings, [
      {
        code: 299,
        agent: '-',
        text: 'example.olmq.io/v1alpha1 Widget is deprecated; use example.olmq.io/v1 Widget',
      },
    ]);
    seen.warnings.length = 0;
    await seen.client.get({ ...widget('v1alpha1', 'old'), namespace: 'default', name: 'old' });
    await seen.client.list({ apiVersion: 'example.olmq.io/v1alpha1', kind: 'Widget' });
    t.equal(seen.warnings.length, 2, 'reads warn too');
    seen.warnings.length = 0;
    await seen.client.create({ ...widget('v1', 'new'), spec: { size: 'small' } });
    t.same(seen.warnings, [], 'the served, non-deprecated version does not warn');
  },
);

t.test('kube client - a deprecationWarning of the CRD version is the text sent', async (t) => {
  const { client } = await clusterFor(t);
  await deprecatedWidgets(client, 'v1alpha1 goes away in 2027; move to v1');
  const seen = collecting(client);
  await seen.client.create(widget('v1alpha1', 'old'));
  t.same(
    seen.warnings.map((w) => w.text),
    ['v1alpha1 goes away in 2027; move to v1'],
  );
});

t.test(
  'kube client - unknown fields (fieldValidation unset = Warn) come back as warnings, after the deprecation',
  async (t) => {
    const { client } = await clusterFor(t);
    await deprecatedWidgets(client);
    const seen = collecting(client);
    await seen.client.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm', namespace: 'default' },
      data: { a: 'b' },
      bogus: true,
    });
    t.same(
      seen.warnings.map((w) => w.text),
      ['unknown field "bogus"'],
    );
    seen.warnings.length = 0;
    await seen.client.create({
      ...widget('v1alpha1', 'two'),
      unexpected: 1,
    });
    t.same(
      seen.warnings.map((w) => w.text),
      [
        'example.olmq.io/v1alpha1 Widget is deprecated; use example.olmq.io/v1 Widget',
        'unknown field "unexpected"',
      ],
    );
  },
);

t.test('kube client - a client without a handler ignores warnings', async (t) => {
  const { client } = await clusterFor(t);
  await deprecatedWidgets(client);
  const created = await client.create(widget('v1alpha1', 'quiet'));
  t.equal(created.metadata.name, 'quiet');
});

t.test(
  'events - recording the same Event again counts it on one object; another message is another Event',
  async (t) => {
    const { client } = await clusterFor(t);
    const involved = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: 'default',
      name: 'subject',
      uid: 'u1',
    };
    const first = coreEvent(
      involved,
      { type: 'Normal', reason: 'Tested', message: 'once' },
      new Date('2026-01-01T00:00:00Z'),
    );
    const again = coreEvent(
      involved,
      { type: 'Normal', reason: 'Tested', message: 'once' },
      new Date('2026-01-01T00:05:00Z'),
    );
    await recordEvent(client, first);
    await recordEvent(client, again);
    await recordEvent(
      client,
      coreEvent(involved, { type: 'Normal', reason: 'Tested', message: 'other' }, new Date()),
    );
    const events = await client.list(
      { apiVersion: 'v1', kind: 'Event', namespace: 'default' },
      { fieldSelector: 'involvedObject.name=subject' },
    );
    t.equal(events.items.length, 2);
    const counted = events.items.find((e) => e['message'] === 'once');
    t.match(counted, {
      count: 2,
      firstTimestamp: '2026-01-01T00:00:00Z',
      lastTimestamp: '2026-01-01T00:05:00Z',
    });
  },
);
