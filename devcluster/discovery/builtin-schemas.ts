// OpenAPI schemas of the built-in kinds whose fields `kubectl explain` should describe, named
// and worded as kube-apiserver 1.30 publishes them (k8s.io/api apps/v1 types). Other built-in
// kinds keep an open schema. The pod template's spec stays open: the devcluster does not model
// PodSpec.
import type { JsonObject } from '../../shared/kube/json.js';

const ref = (name: string): string => `#/components/schemas/${name}`;

/** A property holding another schema, the way kube writes it (allOf with one $ref). */
function refProperty(name: string, description: string, withDefault = true): JsonObject {
  const property: JsonObject = { allOf: [{ $ref: ref(name) }], description };
  if (withDefault) property['default'] = {};
  return property;
}

const integer = (description: string, format = 'int32'): JsonObject => ({
  type: 'integer',
  format,
  description,
});

const labelSelector = 'io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector';
const labelSelectorRequirement = 'io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement';
const intOrString = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';
const podTemplateSpec = 'io.k8s.api.core.v1.PodTemplateSpec';
const podSpec = 'io.k8s.api.core.v1.PodSpec';
const deploymentSpec = 'io.k8s.api.apps.v1.DeploymentSpec';
const deploymentStatus = 'io.k8s.api.apps.v1.DeploymentStatus';
const deploymentStrategy = 'io.k8s.api.apps.v1.DeploymentStrategy';
const rollingUpdateDeployment = 'io.k8s.api.apps.v1.RollingUpdateDeployment';
const deploymentCondition = 'io.k8s.api.apps.v1.DeploymentCondition';

/** Component schemas the built-in kinds below refer to. */
const components: Readonly<Record<string, JsonObject>> = {
  [labelSelector]: {
    description:
      'A label selector is a label query over a set of resources. The result of matchLabels and matchExpressions are ANDed. An empty label selector matches all objects. A null label selector matches no objects.',
    type: 'object',
    properties: {
      matchExpressions: {
        description:
          'matchExpressions is a list of label selector requirements. The requirements are ANDed.',
        type: 'array',
        items: { allOf: [{ $ref: ref(labelSelectorRequirement) }], default: {} },
        'x-kubernetes-list-type': 'atomic',
      },
      matchLabels: {
        description:
          'matchLabels is a map of {key,value} pairs. A single {key,value} in the matchLabels map is equivalent to an element of matchExpressions, whose key field is "key", the operator is "In", and the values array contains only "value". The requirements are ANDed.',
        type: 'object',
        additionalProperties: { type: 'string', default: '' },
      },
    },
    'x-kubernetes-map-type': 'atomic',
  },
  [labelSelectorRequirement]: {
    description:
      'A label selector requirement is a selector that contains values, a key, and an operator that relates the key and values.',
    type: 'object',
    required: ['key', 'operator'],
    properties: {
      key: {
        description: 'key is the label key that the selector applies to.',
        type: 'string',
        default: '',
      },
      operator: {
        description:
          "operator represents a key's relationship to a set of values. Valid operators are In, NotIn, Exists and DoesNotExist.",
        type: 'string',
        default: '',
      },
      values: {
        description:
          'values is an array of string values. If the operator is In or NotIn, the values array must be non-empty. If the operator is Exists or DoesNotExist, the values array must be empty. This array is replaced during a strategic merge patch.',
        type: 'array',
        items: { type: 'string', default: '' },
        'x-kubernetes-list-type': 'atomic',
      },
    },
  },
  [intOrString]: {
    description:
      'IntOrString is a type that can hold an int32 or a string.  When used in JSON or YAML marshalling and unmarshalling, it produces or consumes the inner type.  This allows you to have, for example, a JSON field that can accept a name or number.',
    // OpenAPI v3 gives the two types (kube-openapi's OpenAPIV3OneOfTypes); v2 says string.
    oneOf: [{ type: 'integer' }, { type: 'string' }],
    format: 'int-or-string',
  },
  [podTemplateSpec]: {
    description:
      'PodTemplateSpec describes the data a pod should have when created from a template',
    type: 'object',
    properties: {
      metadata: refProperty(
        'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
        "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
      ),
      spec: refProperty(
        podSpec,
        'Specification of the desired behavior of the pod. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status',
      ),
    },
  },
  [podSpec]: {
    description: 'PodSpec is a description of a pod.',
    type: 'object',
    'x-kubernetes-preserve-unknown-fields': true,
  },
  [deploymentSpec]: {
    description: 'DeploymentSpec is the specification of the desired behavior of the Deployment.',
    type: 'object',
    required: ['selector', 'template'],
    properties: {
      minReadySeconds: integer(
        'Minimum number of seconds for which a newly created pod should be ready without any of its container crashing, for it to be considered available. Defaults to 0 (pod will be considered available as soon as it is ready)',
      ),
      paused: { description: 'Indicates that the deployment is paused.', type: 'boolean' },
      progressDeadlineSeconds: integer(
        'The maximum time in seconds for a deployment to make progress before it is considered to be failed. The deployment controller will continue to process failed deployments and a condition with a ProgressDeadlineExceeded reason will be surfaced in the deployment status. Note that progress will not be estimated during the time a deployment is paused. Defaults to 600s.',
      ),
      replicas: integer(
        'Number of desired pods. This is a pointer to distinguish between explicit zero and not specified. Defaults to 1.',
      ),
      revisionHistoryLimit: integer(
        'The number of old ReplicaSets to retain to allow rollback. This is a pointer to distinguish between explicit zero and not specified. Defaults to 10.',
      ),
      selector: refProperty(
        labelSelector,
        "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment. It must match the pod template's labels.",
        false,
      ),
      strategy: {
        ...refProperty(
          deploymentStrategy,
          'The deployment strategy to use to replace existing pods with new ones.',
        ),
        'x-kubernetes-patch-strategy': 'retainKeys',
      },
      template: refProperty(
        podTemplateSpec,
        'Template describes the pods that will be created. The only allowed template.spec.restartPolicy value is "Always".',
      ),
    },
  },
  [deploymentStrategy]: {
    description: 'DeploymentStrategy describes how to replace existing pods with new ones.',
    type: 'object',
    properties: {
      rollingUpdate: refProperty(
        rollingUpdateDeployment,
        'Rolling update config params. Present only if DeploymentStrategyType = RollingUpdate.',
        false,
      ),
      type: {
        description:
          'Type of deployment. Can be "Recreate" or "RollingUpdate". Default is RollingUpdate.\n\nPossible enum values:\n - `"Recreate"` Kill all existing pods before creating new ones.\n - `"RollingUpdate"` Replace the old ReplicaSets by new one using rolling update i.e gradually scale down the old ReplicaSets and scale up the new one.',
        type: 'string',
        enum: ['Recreate', 'RollingUpdate'],
      },
    },
  },
  [rollingUpdateDeployment]: {
    description: 'Spec to control the desired behavior of rolling update.',
    type: 'object',
    properties: {
      maxSurge: refProperty(
        intOrString,
        'The maximum number of pods that can be scheduled above the desired number of pods. Value can be an absolute number (ex: 5) or a percentage of desired pods (ex: 10%). This can not be 0 if MaxUnavailable is 0. Absolute number is calculated from percentage by rounding up. Defaults to 25%.',
        false,
      ),
      maxUnavailable: refProperty(
        intOrString,
        'The maximum number of pods that can be unavailable during the update. Value can be an absolute number (ex: 5) or a percentage of desired pods (ex: 10%). Absolute number is calculated from percentage by rounding down. This can not be 0 if MaxSurge is 0. Defaults to 25%.',
        false,
      ),
    },
  },
  [deploymentStatus]: {
    description: 'DeploymentStatus is the most recently observed status of the Deployment.',
    type: 'object',
    properties: {
      availableReplicas: integer(
        'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.',
      ),
      collisionCount: integer(
        'Count of hash collisions for the Deployment. The Deployment controller uses this field as a collision avoidance mechanism when it needs to create the name for the newest ReplicaSet.',
      ),
      conditions: {
        description:
          "Represents the latest available observations of a deployment's current state.",
        type: 'array',
        items: { allOf: [{ $ref: ref(deploymentCondition) }], default: {} },
        'x-kubernetes-list-map-keys': ['type'],
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-patch-merge-key': 'type',
        'x-kubernetes-patch-strategy': 'merge',
      },
      observedGeneration: integer('The generation observed by the deployment controller.', 'int64'),
      readyReplicas: integer(
        'readyReplicas is the number of pods targeted by this Deployment with a Ready Condition.',
      ),
      replicas: integer(
        'Total number of non-terminated pods targeted by this deployment (their labels match the selector).',
      ),
      unavailableReplicas: integer(
        'Total number of unavailable pods targeted by this deployment. This is the total number of pods that are still required for the deployment to have 100% available capacity. They may either be pods that are running but not yet available or pods that still have not been created.',
      ),
      updatedReplicas: integer(
        'Total number of non-terminated pods targeted by this deployment that have the desired template spec.',
      ),
    },
  },
  [deploymentCondition]: {
    description: 'DeploymentCondition describes the state of a deployment at a certain point.',
    type: 'object',
    required: ['type', 'status'],
    properties: {
      lastTransitionTime: {
        description: 'Last time the condition transitioned from one status to another.',
        type: 'string',
        format: 'date-time',
      },
      lastUpdateTime: {
        description: 'The last time this condition was updated.',
        type: 'string',
        format: 'date-time',
      },
      message: {
        description: 'A human readable message indicating details about the transition.',
        type: 'string',
      },
      reason: { description: "The reason for the condition's last transition.", type: 'string' },
      status: {
        description: 'Status of the condition, one of True, False, Unknown.',
        type: 'string',
        default: '',
      },
      type: { description: 'Type of deployment condition.', type: 'string', default: '' },
    },
  },
};

/** The kinds described, by schema name: their description and spec/status components. */
const kinds: Readonly<
  Record<string, { description: string; spec: [string, string]; status: [string, string] }>
> = {
  'io.k8s.api.apps.v1.Deployment': {
    description: 'Deployment enables declarative updates for Pods and ReplicaSets.',
    spec: [deploymentSpec, 'Specification of the desired behavior of the Deployment.'],
    status: [deploymentStatus, 'Most recently observed status of the Deployment.'],
  },
};

/** The schema of a described built-in kind (without apiVersion, kind and metadata), if any. */
export function builtinKindSchema(schemaName: string): JsonObject | undefined {
  const kind = kinds[schemaName];
  if (kind === undefined) return undefined;
  return {
    description: kind.description,
    type: 'object',
    properties: {
      spec: refProperty(...kind.spec),
      status: refProperty(...kind.status),
    },
  };
}

/** Swagger 2.0 forms of components whose v3 form uses what v2 lacks (oneOf). */
const v2Forms: Readonly<Record<string, (v3: JsonObject) => JsonObject>> = {
  [intOrString]: ({ description }) => ({
    ...(description === undefined ? {} : { description }),
    type: 'string',
    format: 'int-or-string',
  }),
};

/** The component schemas `schemas` refer to, transitively (fresh copies), in OpenAPI v3 or v2 form. */
export function referencedComponents(
  schemas: readonly JsonObject[],
  form: 'v3' | 'v2' = 'v3',
): Record<string, JsonObject> {
  const found: Record<string, JsonObject> = {};
  const pending = schemas.flatMap((schema) => refsIn(schema));
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    const component = components[name];
    if (component === undefined || found[name] !== undefined) continue;
    const v2 = form === 'v2' ? v2Forms[name] : undefined;
    found[name] = v2 ? v2(component) : structuredClone(component);
    pending.push(...refsIn(component));
  }
  return found;
}

function refsIn(schema: JsonObject): string[] {
  const prefix = ref('');
  return [...JSON.stringify(schema).matchAll(/"\$ref":"([^"]+)"/g)]
    .map((match) => match[1] ?? '')
    .filter((target) => target.startsWith(prefix))
    .map((target) => target.slice(prefix.length));
}
