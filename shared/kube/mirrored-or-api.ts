// One object as the functions read what they may not take the mirror's word for: the watcher's
// mirror first, the API when the mirror lacks it (not mirrored, or not yet: an object just
// created may reach the mirror after others created with it).
import { getMirrored, type MirrorSource } from '../bus/mirror-read.js';
import type { KubeClient, KubeObject, ObjectRef } from './client.js';

/** One object from the mirror, or from the API when the mirror lacks it. */
export async function mirroredOrApi<T extends KubeObject>(
  mirror: MirrorSource,
  client: KubeClient,
  cluster: string,
  ref: ObjectRef & { name: string },
): Promise<T | undefined> {
  const mirrored = await getMirrored<T>(mirror, {
    cluster,
    kind: ref.kind,
    namespace: ref.namespace ?? '',
    name: ref.name,
  });
  return mirrored ?? (await client.get<T>(ref));
}
