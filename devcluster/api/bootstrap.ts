// What a fresh cluster holds before anyone writes: kube's initial namespaces, its bootstrap RBAC
// policy and system priority classes, and the one node the simulated kubelet runs pods on
// (created only where missing, so a restart over a data directory keeps changes).
import { bootstrapRbac } from '../auth/index.js';
import { text, type JsonObject } from '../../shared/kube/json.js';
import { systemWrite, type ApiCore } from './core.js';

const initialNamespaces = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

/** The simulated kubelet's node: its address is the hostIP of every pod. */
export const nodeName = 'devcluster';

function node(kubernetesVersion: string): JsonObject {
  const ready = {
    type: 'Ready',
    status: 'True',
    reason: 'KubeletReady',
    message: 'kubelet is posting ready status',
  };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: nodeName,
      labels: {
        'kubernetes.io/hostname': nodeName,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': process.arch === 'arm64' ? 'arm64' : 'amd64',
        'node-role.kubernetes.io/control-plane': '',
      },
    },
    spec: {},
    status: {
      conditions: [ready],
      addresses: [
        { type: 'InternalIP', address: '10.0.0.1' },
        { type: 'Hostname', address: nodeName },
      ],
      nodeInfo: {
        kubeletVersion: kubernetesVersion,
        kubeProxyVersion: kubernetesVersion,
        operatingSystem: 'linux',
        architecture: process.arch === 'arm64' ? 'arm64' : 'amd64',
        osImage: 'olmq devcluster',
        kernelVersion: '',
        containerRuntimeVersion: 'simulated://1',
      },
    },
  };
}

/** kube-apiserver's system priority classes (scheduling's bootstrap). */
const systemPriorityClasses: readonly JsonObject[] = (
  [
    [
      'system-node-critical',
      2000001000,
      'Used for system critical pods that must not be moved from their current node.',
    ],
    [
      'system-cluster-critical',
      2000000000,
      'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.',
    ],
  ] as const
).map(([name, value, description]) => ({
  apiVersion: 'scheduling.k8s.io/v1',
  kind: 'PriorityClass',
  metadata: { name },
  value,
  description,
}));

/** Creates the initial namespaces, bootstrap RBAC objects, priority classes and node that do not exist yet. */
export function bootstrap(core: ApiCore, kubernetesVersion: string): void {
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
  const priorityClasses = core.typeOf('scheduling.k8s.io', 'priorityclasses');
  for (const object of systemPriorityClasses) {
    const name = text((object['metadata'] as JsonObject)['name']);
    if (!core.find(priorityClasses, '', name))
      core.create(priorityClasses, '', structuredClone(object), write);
  }
  const nodes = core.typeOf('', 'nodes');
  if (!core.find(nodes, '', nodeName)) core.create(nodes, '', node(kubernetesVersion), write);
}
