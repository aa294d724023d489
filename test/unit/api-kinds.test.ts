import t from 'tap';
import type { z } from 'zod';
import { catalogSourceSchema } from '../../shared/api/catalogsource.js';
import { configMapSchema, deploymentSchema, namespaceSchema } from '../../shared/api/core.js';
import { installPlanSchema } from '../../shared/api/installplan.js';
import { olmConfigSchema } from '../../shared/api/olmconfig.js';
import {
  operatorConditionSchema,
  operatorConditionV1Schema,
} from '../../shared/api/operatorcondition.js';
import {
  operatorGroupSchema,
  upgradeStrategyOf,
  operatorGroupV1alpha2Schema,
} from '../../shared/api/operatorgroup.js';
import { subscriptionSchema } from '../../shared/api/subscription.js';
import { ObjectValidationError, parseObject, statusCauses } from '../../shared/api/validation.js';

const now = '2026-11-22T05:00:00Z';

/** The [field, cause type] pairs of the error `parseObject` throws for `value`. */
function rejected(schema: z.ZodType, value: unknown): [string, string][] {
  try {
    parseObject(schema, value, 'object');
  } catch (error) {
    if (error instanceof ObjectValidationError)
      return error.issues.map((issue) => [issue.field, issue.type]);
    throw error;
  }
  throw new Error('expected the object to be rejected');
}

function installPlan(): Record<string, unknown> {
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'InstallPlan',
    metadata: { name: 'install-abcde', namespace: 'operators', generateName: 'install-' },
    spec: {
      clusterServiceVersionNames: ['etcdoperator.v0.9.4'],
      approval: 'Manual',
      approved: false,
      generation: 1,
    },
    status: {
      phase: 'RequiresApproval',
      catalogSources: ['operatorhubio-catalog'],
      plan: [
        {
          resolving: 'etcdoperator.v0.9.4',
          resource: {
            sourceName: 'operatorhubio-catalog',
            sourceNamespace: 'olm',
            group: 'operators.coreos.com',
            version: 'v1alpha1',
            kind: 'ClusterServiceVersion',
            name: 'etcdoperator.v0.9.4',
            manifest: '{}',
          },
          status: 'Unknown',
        },
      ],
      conditions: [
        { type: 'Installed', status: 'False', reason: 'InstallComponentFailed', message: 'boom' },
      ],
      bundleLookups: [
        {
          path: 'quay.io/example/bundle@sha256:0',
          identifier: 'etcdoperator.v0.9.4',
          replaces: '',
          catalogSourceRef: { name: 'operatorhubio-catalog', namespace: 'olm' },
          conditions: [{ type: 'BundleLookupPending', status: 'True', reason: 'JobIncomplete' }],
        },
      ],
      startTime: now,
    },
  };
}

function subscription(): Record<string, unknown> {
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    metadata: { name: 'etcd', namespace: 'operators' },
    spec: {
      name: 'etcd',
      source: 'operatorhubio-catalog',
      sourceNamespace: 'olm',
      channel: 'singlenamespace-alpha',
      installPlanApproval: 'Automatic',
      config: {
        env: [{ name: 'HTTP_PROXY', value: 'http://proxy:3128' }],
        tolerations: [{ key: 'node-role', operator: 'Exists', effect: 'NoSchedule' }],
        affinity: { nodeAffinity: {} },
        resources: { limits: { cpu: '100m' } },
      },
    },
    status: {
      state: 'AtLatestKnown',
      currentCSV: 'etcdoperator.v0.9.4',
      installedCSV: 'etcdoperator.v0.9.4',
      lastUpdated: now,
      conditions: [
        { type: 'CatalogSourcesUnhealthy', status: 'False', reason: 'AllCatalogSourcesHealthy' },
      ],
      catalogHealth: [
        {
          catalogSourceRef: { name: 'operatorhubio-catalog', namespace: 'olm' },
          lastUpdated: now,
          healthy: true,
        },
      ],
    },
  };
}

function catalogSource(): Record<string, unknown> {
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'CatalogSource',
    metadata: { name: 'operatorhubio-catalog', namespace: 'olm' },
    spec: {
      sourceType: 'grpc',
      image: 'quay.io/operatorhubio/catalog:latest',
      displayName: 'Community Operators',
      publisher: 'OperatorHub.io',
      updateStrategy: { registryPoll: { interval: '60m' } },
      grpcPodConfig: { memoryTarget: '30Mi', securityContextConfig: 'restricted' },
    },
    status: {
      connectionState: {
        address: 'operatorhubio-catalog.olm.svc:50051',
        lastObservedState: 'READY',
        lastConnect: now,
      },
      registryService: {
        protocol: 'grpc',
        serviceName: 'operatorhubio-catalog',
        serviceNamespace: 'olm',
        port: '50051',
      },
    },
  };
}

void t.test('installplan schema - accepts a plan awaiting approval', (t) => {
  const parsed = parseObject(installPlanSchema, installPlan(), 'InstallPlan');
  t.equal(parsed.status?.phase, 'RequiresApproval');
  t.equal(parsed.status?.plan?.[0]?.status, 'Unknown');
  t.end();
});

void t.test('installplan schema - rejects an unknown approval and step status', (t) => {
  const ip = installPlan();
  (ip.spec as Record<string, unknown>).approval = 'Sometimes';
  const status = ip.status as { plan: { status: string }[] };
  (status.plan[0] as { status: string }).status = 'Done';
  t.same(rejected(installPlanSchema, ip), [
    ['spec.approval', 'FieldValueNotSupported'],
    ['status.plan[0].status', 'FieldValueNotSupported'],
  ]);
  t.end();
});

void t.test('installplan schema - requires approved and the status catalogSources', (t) => {
  const ip = installPlan();
  delete (ip.spec as Record<string, unknown>).approved;
  delete (ip.status as Record<string, unknown>).catalogSources;
  t.same(rejected(installPlanSchema, ip), [
    ['spec.approved', 'FieldValueRequired'],
    ['status.catalogSources', 'FieldValueRequired'],
  ]);
  t.end();
});

void t.test('installplan schema - rejects an unknown phase and condition type', (t) => {
  const ip = installPlan();
  const status = ip.status as Record<string, unknown>;
  status.phase = 'Done';
  status.conditions = [{ type: 'Ready', status: 'True' }];
  t.same(rejected(installPlanSchema, ip), [
    ['status.conditions[0].type', 'FieldValueNotSupported'],
    ['status.phase', 'FieldValueNotSupported'],
  ]);
  t.end();
});

void t.test('subscription schema - accepts a subscription with config overrides', (t) => {
  const parsed = parseObject(subscriptionSchema, subscription(), 'Subscription');
  t.equal(parsed.spec.name, 'etcd');
  t.same(parsed.spec.config?.affinity, { nodeAffinity: {} });
  t.equal(parsed.status?.state, 'AtLatestKnown');
  t.end();
});

void t.test('subscription schema - requires package, source and sourceNamespace', (t) => {
  const sub = subscription();
  sub.spec = { channel: 'alpha' };
  t.same(rejected(subscriptionSchema, sub), [
    ['spec.name', 'FieldValueRequired'],
    ['spec.source', 'FieldValueRequired'],
    ['spec.sourceNamespace', 'FieldValueRequired'],
  ]);
  t.end();
});

void t.test('subscription schema - rejects an unknown state, approval and condition type', (t) => {
  const sub = subscription();
  (sub.spec as Record<string, unknown>).installPlanApproval = 'automatic';
  const status = sub.status as Record<string, unknown>;
  status.state = 'Happy';
  status.conditions = [{ type: 'Healthy', status: 'True' }];
  t.same(rejected(subscriptionSchema, sub), [
    ['spec.installPlanApproval', 'FieldValueNotSupported'],
    ['status.conditions[0].type', 'FieldValueNotSupported'],
    ['status.state', 'FieldValueNotSupported'],
  ]);
  t.end();
});

void t.test('catalogsource schema - accepts an image catalog with pod config', (t) => {
  const parsed = parseObject(catalogSourceSchema, catalogSource(), 'CatalogSource');
  t.equal(parsed.spec.grpcPodConfig?.memoryTarget, '30Mi');
  t.equal(parsed.status?.connectionState?.lastObservedState, 'READY');
  t.end();
});

void t.test('catalogsource schema - defaults securityContextConfig to legacy', (t) => {
  const source = catalogSource();
  (source.spec as Record<string, unknown>).grpcPodConfig = {};
  const parsed = parseObject(catalogSourceSchema, source, 'CatalogSource');
  t.equal(parsed.spec.grpcPodConfig?.securityContextConfig, 'legacy');
  t.end();
});

void t.test(
  'catalogsource schema - accepts an unknown sourceType so the catalog can report it',
  (t) => {
    const source = catalogSource();
    (source.spec as Record<string, unknown>).sourceType = 'ftp';
    t.equal(parseObject(catalogSourceSchema, source, 'CatalogSource').spec.sourceType, 'ftp');
    t.end();
  },
);

void t.test(
  'catalogsource schema - rejects a bad security profile, status reason and connection state',
  (t) => {
    const source = catalogSource();
    (source.spec as Record<string, unknown>).grpcPodConfig = {
      securityContextConfig: 'privileged',
    };
    source.status = { reason: 'Oops', connectionState: { lastObservedState: 'UP' } };
    t.same(rejected(catalogSourceSchema, source), [
      ['spec.grpcPodConfig.securityContextConfig', 'FieldValueNotSupported'],
      ['status.connectionState.lastObservedState', 'FieldValueNotSupported'],
      ['status.reason', 'FieldValueNotSupported'],
    ]);
    t.end();
  },
);

void t.test('catalogsource schema - requires sourceType', (t) => {
  const source = catalogSource();
  delete (source.spec as Record<string, unknown>).sourceType;
  t.same(rejected(catalogSourceSchema, source), [['spec.sourceType', 'FieldValueRequired']]);
  t.end();
});

void t.test('operatorgroup schema - defaults the upgrade strategy to Default', (t) => {
  const og = {
    metadata: { name: 'og', namespace: 'operators' },
    spec: { targetNamespaces: ['operators'] },
  };
  t.equal(parseObject(operatorGroupSchema, og, 'OperatorGroup').spec.upgradeStrategy, 'Default');
  t.end();
});

void t.test('operatorgroup schema - defaults a missing spec as upstream', (t) => {
  const og = { metadata: { name: 'og', namespace: 'operators' } };
  t.same(parseObject(operatorGroupSchema, og, 'OperatorGroup').spec, {
    upgradeStrategy: 'Default',
  });
  t.end();
});

void t.test("operatorgroup schema - accepts upstream's string upgradeStrategy", (t) => {
  const og = {
    metadata: { name: 'og', namespace: 'operators' },
    spec: { upgradeStrategy: 'TechPreviewUnsafeFailForward' },
  };
  const parsed = parseObject(operatorGroupSchema, og, 'OperatorGroup');
  t.equal(parsed.spec.upgradeStrategy, 'TechPreviewUnsafeFailForward');
  t.equal(upgradeStrategyOf(parsed), 'TechPreviewUnsafeFailForward');
  t.end();
});

void t.test(
  'operatorgroup schema - upgradeStrategyOf reads the old object form and defaults',
  (t) => {
    t.equal(
      upgradeStrategyOf({ spec: { upgradeStrategy: { name: 'TechPreviewUnsafeFailForward' } } }),
      'TechPreviewUnsafeFailForward',
    );
    t.equal(upgradeStrategyOf({ spec: { upgradeStrategy: { name: 'Default' } } }), 'Default');
    t.equal(upgradeStrategyOf({}), 'Default');
    t.equal(upgradeStrategyOf({ spec: { upgradeStrategy: 'YOLO' } }), 'Default');
    t.end();
  },
);

void t.test('operatorgroup schema - accepts status conditions as metav1.Condition', (t) => {
  const og = {
    metadata: { name: 'og', namespace: 'operators' },
    spec: { upgradeStrategy: 'TechPreviewUnsafeFailForward' },
    status: {
      namespaces: [''],
      lastUpdated: now,
      conditions: [
        {
          type: 'MultipleOperatorGroup',
          status: 'True',
          reason: 'MultipleOperatorGroupsFound',
          message: 'Multiple OperatorGroup found in the same namespace',
          lastTransitionTime: now,
        },
      ],
    },
  };
  const parsed = parseObject(operatorGroupSchema, og, 'OperatorGroup');
  t.equal(parsed.status?.conditions?.[0]?.reason, 'MultipleOperatorGroupsFound');
  t.end();
});

void t.test(
  'operatorgroup schema - rejects an unknown upgrade strategy and an incomplete condition',
  (t) => {
    const og = {
      metadata: { name: 'og' },
      spec: { upgradeStrategy: 'YOLO' },
      status: {
        lastUpdated: now,
        conditions: [{ type: 'MultipleOperatorGroup', status: 'Maybe' }],
      },
    };
    t.same(rejected(operatorGroupSchema, og), [
      ['spec.upgradeStrategy', 'FieldValueNotSupported'],
      ['status.conditions[0].lastTransitionTime', 'FieldValueRequired'],
      ['status.conditions[0].message', 'FieldValueRequired'],
      ['status.conditions[0].reason', 'FieldValueRequired'],
      ['status.conditions[0].status', 'FieldValueNotSupported'],
    ]);
    t.end();
  },
);

void t.test('operatorgroup schema - v1alpha2 has no upgrade strategy', (t) => {
  const og = {
    metadata: { name: 'og' },
    spec: { selector: {}, upgradeStrategy: 'Default' },
  };
  const parsed = parseObject(operatorGroupV1alpha2Schema, og, 'OperatorGroup');
  t.same(parsed.spec, { selector: {} });
  t.end();
});

void t.test('olmconfig schema - accepts the feature switches', (t) => {
  const config = {
    metadata: { name: 'cluster' },
    spec: { features: { disableCopiedCSVs: true, packageServerSyncInterval: '5m30s' } },
  };
  t.equal(
    parseObject(olmConfigSchema, config, 'OLMConfig').spec?.features?.disableCopiedCSVs,
    true,
  );
  t.end();
});

void t.test('olmconfig schema - rejects a sync interval that is not a Go duration', (t) => {
  const config = {
    metadata: { name: 'cluster' },
    spec: { features: { packageServerSyncInterval: '5 minutes' } },
  };
  t.same(rejected(olmConfigSchema, config), [
    ['spec.features.packageServerSyncInterval', 'FieldValueInvalid'],
  ]);
  t.end();
});

void t.test('operatorcondition schema - v2 keeps spec.conditions, v1 drops them', (t) => {
  const condition = {
    type: 'Upgradeable',
    status: 'False',
    reason: 'Migrating',
    message: 'migration in progress',
    lastTransitionTime: now,
  };
  const object = {
    metadata: { name: 'etcdoperator.v0.9.4', namespace: 'operators' },
    spec: {
      serviceAccounts: ['etcd-operator'],
      deployments: ['etcd-operator'],
      conditions: [condition],
    },
  };
  t.same(parseObject(operatorConditionSchema, object, 'OperatorCondition').spec?.conditions, [
    condition,
  ]);
  t.notOk(
    'conditions' in
      (parseObject(operatorConditionV1Schema, object, 'OperatorCondition').spec ?? {}),
  );
  t.end();
});

void t.test(
  'operatorcondition schema - rejects a condition timestamp that is not RFC 3339',
  (t) => {
    const object = {
      metadata: { name: 'x' },
      spec: {
        overrides: [
          {
            type: 'Upgradeable',
            status: 'True',
            reason: 'Ok',
            message: '',
            lastTransitionTime: 'yesterday',
          },
        ],
      },
    };
    t.same(rejected(operatorConditionSchema, object), [
      ['spec.overrides[0].lastTransitionTime', 'FieldValueInvalid'],
    ]);
    t.end();
  },
);

void t.test('core schemas - keep fields olmq does not model', (t) => {
  const ns = {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'a', somethingNew: 1 },
    spec: { finalizers: ['kubernetes'] },
  };
  t.same(parseObject(namespaceSchema, ns, 'Namespace'), ns);
  t.end();
});

void t.test('core schemas - still check the fields olmq uses', (t) => {
  const cm = { metadata: { name: 'a' }, data: { key: 1 } };
  t.same(rejected(configMapSchema, cm), [['data[key]', 'FieldValueTypeInvalid']]);
  t.end();
});

void t.test('core schemas - a deployment needs a pod template with containers', (t) => {
  const deployment = { metadata: { name: 'd' }, spec: { selector: {}, template: { spec: {} } } };
  t.same(rejected(deploymentSchema, deployment), [
    ['spec.template.spec.containers', 'FieldValueRequired'],
  ]);
  t.end();
});

void t.test(
  'validation - a map key that looks like a field name is still printed in brackets',
  (t) => {
    const csvLike = { metadata: { name: 'a', labels: { app: 7 } } };
    t.same(rejected(namespaceSchema, csvLike), [['metadata.labels[app]', 'FieldValueTypeInvalid']]);
    t.end();
  },
);

void t.test('validation - status causes carry type, field and message', (t) => {
  try {
    parseObject(
      subscriptionSchema,
      { metadata: {}, spec: { name: 'p', source: 's' } },
      'Subscription "s"',
    );
    t.fail('expected a validation error');
  } catch (error) {
    if (!(error instanceof ObjectValidationError)) throw error;
    t.same(statusCauses(error), [
      { type: 'FieldValueRequired', field: 'spec.sourceNamespace', message: 'Required value' },
    ]);
    t.equal(error.message, 'Subscription "s" is invalid: spec.sourceNamespace: Required value');
  }
  t.end();
});

void t.test('operatorcondition schema - rejects a condition reason with spaces', (t) => {
  const object = {
    metadata: { name: 'x' },
    spec: {
      overrides: [
        {
          type: 'Upgradeable',
          status: 'True',
          reason: 'not ok',
          message: '',
          lastTransitionTime: now,
        },
      ],
    },
  };
  t.same(rejected(operatorConditionSchema, object), [
    ['spec.overrides[0].reason', 'FieldValueInvalid'],
  ]);
  t.end();
});
