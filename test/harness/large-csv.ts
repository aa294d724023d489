// The largest real CSV of the fixtures: stackgres-community.v1.18.8 (1,078,374 bytes as JSON,
// beyond NATS's default 1 MiB max payload), read from its bundle's olm.bundle.object property.
import { join } from 'node:path';
import { readCatalogDirectory } from '../../shared/catalog/fbc-directory.js';
import type { KubeObject } from '../../shared/kube/client.js';
import { operatorhubPackages } from './repo.js';

/** Package, channel and bundle of the large CSV. */
export const largeCsvBundle = {
  package: 'stackgres-community',
  channel: 'stable',
  name: 'stackgres-community.v1.18.8',
} as const;

/** The stackgres-community.v1.18.8 CSV as its bundle carries it. */
export async function largeCsv(): Promise<KubeObject> {
  const objects = await readCatalogDirectory(join(operatorhubPackages, largeCsvBundle.package));
  const bundle = objects.find(
    (o) => o.schema === 'olm.bundle' && o.value['name'] === largeCsvBundle.name,
  );
  const properties = (bundle?.value['properties'] ?? []) as {
    type: string;
    value: { data?: string };
  }[];
  for (const property of properties) {
    if (property.type !== 'olm.bundle.object' || property.value.data === undefined) continue;
    const object = JSON.parse(Buffer.from(property.value.data, 'base64').toString('utf8')) as
      KubeObject | undefined;
    if (object?.kind === 'ClusterServiceVersion') return object;
  }
  throw new Error(`no CSV in bundle ${largeCsvBundle.name}`);
}
