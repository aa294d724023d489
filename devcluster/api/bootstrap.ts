// What a fresh cluster holds before anyone writes: kube's initial namespaces and its bootstrap
// RBAC policy (created only where missing, so a restart over a data directory keeps changes).
import { bootstrapRbac } from '../auth/index.js';
import { text, type JsonObject } from '../../shared/kube/json.js';
import { systemWrite, type ApiCore } from './core.js';

const initialNamespaces = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

/** Creates the initial namespaces and bootstrap RBAC objects that do not exist yet. */
export function bootstrap(core: ApiCore): void {
  const write = systemWrite('devcluster-bootstrap');
  const nsType = core.typeOf('', 'namespaces');
  for (const name of initialNamespaces) {
    if (!core.find(nsType, '', name))
      core.create(nsType, '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, write);
  }
  for (const object of bootstrapRbac()) {
    const kind = text(object['kind']);
    const type = core.typeOf('rbac.authorization.k8s.io', `${kind.toLowerCase()}s`);
    const metadata = object['metadata'] as JsonObject;
    const namespace = text(metadata['namespace'] ?? '');
    if (core.find(type, namespace, text(metadata['name']))) continue;
    core.create(type, namespace, structuredClone(object), write);
  }
}
