// Unpacked bundles in JetStream: the object store bucket `olmq_bundles`, one object per image
// manifest digest, shared by every cluster and replica (a bundle is unpacked once per digest).
// Checked against its schema on read, as every hand-off is.
import { Objm, type ObjectStore } from '@nats-io/obj';
import { readObject } from '../bus/object-read.js';
import { alignStream, newAssetReplicas, type Backbone } from '../bus/backbone.js';
import { encodeToken } from '../bus/subjects.js';
import { UnpackedBundleSchema, type UnpackedBundle } from './types.js';

/** Object store bucket holding unpacked bundles by image digest. */
export const bundleBucket = 'olmq_bundles';

const objectName = (digest: string): string => `bundle/${encodeToken(digest)}`;

/** Opens (or creates) the bundle object store. */
export async function openBundleStore(backbone: Backbone): Promise<ObjectStore> {
  const { options } = backbone;
  // Unpacked bundles are catalog content: they share the catalogs' limit and placement.
  const store = await new Objm(backbone.js).create(bundleBucket, {
    replicas: newAssetReplicas(options),
    max_bytes: options.limits.catalogsBytes,
    ...(options.placement === undefined ? {} : { placement: options.placement }),
  });
  await alignStream(backbone.jsm, `OBJ_${bundleBucket}`, options, options.limits.catalogsBytes);
  return store;
}

/** The bundle stored under image digest `digest`, or undefined when none is. */
export async function readUnpackedBundle(
  store: ObjectStore,
  digest: string,
): Promise<UnpackedBundle | undefined> {
  const bytes = await readObject(store, objectName(digest));
  if (bytes === null) return undefined;
  const parsed = UnpackedBundleSchema.safeParse(JSON.parse(Buffer.from(bytes).toString('utf8')));
  // A record another version wrote in another shape is unpacked again rather than trusted.
  return parsed.success ? parsed.data : undefined;
}

/** Stores an unpacked bundle under its digest (a second put of the same digest is harmless). */
export async function storeUnpackedBundle(
  store: ObjectStore,
  bundle: UnpackedBundle,
): Promise<void> {
  const checked = UnpackedBundleSchema.parse(bundle);
  await store.putBlob(
    { name: objectName(checked.digest) },
    new TextEncoder().encode(JSON.stringify(checked)),
  );
}
