// Helpers of the `kubectl olmq why` tests: waiting until `why` names a cause, namespaces with
// an OperatorGroup, Subscriptions, and variants of the example catalog's etcd package built to
// fail in one precise way.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { parseCatalogText } from '../../shared/catalog/index.js';
import type { KubeClient } from '../../shared/kube/client.js';
import { kubectl, type ClusterFixture, type KubectlResult } from './devcluster.js';
import { smallCatalog } from './repo.js';
import { waitFor } from './wait.js';

/** `why -o json`. */
export interface WhyJson {
  summary: string;
  finding?: { cause: string; message: string; fix: string[] };
  links: { stage: string; status: string; detail: string }[];
}

/** Waits until `why` names `cause`; returns its JSON and its text screen. */
export async function whyNames(
  olmq: (...args: string[]) => Promise<KubectlResult>,
  namespace: string,
  sub: string,
  cause: string,
): Promise<{ json: WhyJson; text: string }> {
  const json = await waitFor(
    `why ${namespace}/${sub} to name ${cause}`,
    async () => {
      const r = await olmq('why', sub, '-n', namespace, '-o', 'json');
      if (r.code !== 0) throw new Error(r.stderr);
      const out = JSON.parse(r.stdout) as WhyJson;
      if (out.finding?.cause !== cause) throw new Error(`found ${out.finding?.cause ?? 'nothing'}`);
      return out;
    },
    90_000,
    500,
  );
  const text = await olmq('why', sub, '-n', namespace);
  return { json, text: text.stdout };
}

/** A namespace with an OwnNamespace OperatorGroup. */
export async function namespaceWithGroup(
  fixture: ClusterFixture,
  client: KubeClient,
  namespace: string,
): Promise<void> {
  await kubectl(fixture, ['create', 'namespace', namespace]);
  await client.create({
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name: namespace, namespace },
    spec: { targetNamespaces: [namespace] },
  });
}

/** A Subscription named after its package. */
export async function subscribe(
  client: KubeClient,
  namespace: string,
  spec: Record<string, unknown>,
): Promise<void> {
  await client.create({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    metadata: { name: String(spec['name']), namespace },
    spec,
  });
}

/** The etcd package of the example catalog with `mutate` applied to every bundle object. */
export function etcdVariant(
  t: Test,
  mutate: (object: Record<string, unknown>) => Record<string, unknown>[],
): string {
  const dir = mkdtempSync(join(tmpdir(), 'olmq-plugin-catalog-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(smallCatalog, 'etcd', 'catalog.json');
  const docs = parseCatalogText(readFileSync(file, 'utf8'), file).map((o) => {
    if (o.schema !== 'olm.bundle') return o.value;
    const properties = (
      o.value['properties'] as { type: string; value: { data?: string } }[]
    ).flatMap((p) => {
      if (p.type !== 'olm.bundle.object' || p.value.data === undefined) return [p];
      const object = JSON.parse(Buffer.from(p.value.data, 'base64').toString('utf8')) as Record<
        string,
        unknown
      >;
      return mutate(object).map((m) => ({
        type: p.type,
        value: { data: Buffer.from(JSON.stringify(m)).toString('base64') },
      }));
    });
    return { ...o.value, properties };
  });
  mkdirSync(join(dir, 'etcd'));
  writeFileSync(join(dir, 'etcd', 'catalog.json'), docs.map((d) => JSON.stringify(d)).join('\n'));
  return dir;
}
