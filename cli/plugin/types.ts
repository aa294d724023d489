// The contract of `kubectl olmq`: the views of the API objects it reads, its errors and exit
// codes. Views are loose zod schemas of the fields the plugin reads: a real cluster's objects
// carry more (newer OLM fields, other controllers' status), which must not make a read fail.
import { z } from 'zod';

/** Exit codes, as kubectl's: 0 done, 1 failed or not found, 2 bad usage. */
export const pluginExit = { ok: 0, failed: 1, usage: 2 } as const;

/** The command line cannot be used; names the flag or argument. Exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** An object the command needs does not exist; worded as kubectl's NotFound. Exit 1. */
export class NotFoundError extends Error {
  override readonly name = 'NotFoundError';
}

/** The command ran but the outcome is a failure (a wait timed out, a plan failed). Exit 1. */
export class CommandFailedError extends Error {
  override readonly name = 'CommandFailedError';
}

/** How results are printed. */
export type OutputFormat = 'table' | 'json' | 'yaml';

const condition = z.looseObject({
  type: z.string(),
  status: z.string().optional(),
  reason: z.string().optional(),
  message: z.string().optional(),
});

const meta = z.looseObject({
  name: z.string(),
  namespace: z.string().optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
  creationTimestamp: z.string().optional(),
  deletionTimestamp: z.string().optional(),
});

/** The fields of a Subscription the plugin reads. */
export const subscriptionView = z.looseObject({
  metadata: meta,
  spec: z.looseObject({
    name: z.string(),
    source: z.string().optional(),
    sourceNamespace: z.string().optional(),
    channel: z.string().optional(),
    startingCSV: z.string().optional(),
    installPlanApproval: z.string().optional(),
  }),
  status: z
    .looseObject({
      state: z.string().optional(),
      currentCSV: z.string().optional(),
      installedCSV: z.string().optional(),
      installPlanRef: z.looseObject({ name: z.string().optional() }).optional(),
      conditions: z.array(condition).optional(),
      catalogHealth: z
        .array(
          z.looseObject({
            catalogSourceRef: z.looseObject({
              name: z.string().optional(),
              namespace: z.string().optional(),
            }),
            healthy: z.boolean(),
          }),
        )
        .optional(),
    })
    .optional(),
});
export type SubscriptionView = z.infer<typeof subscriptionView>;

/** The fields of an InstallPlan the plugin reads. */
export const installPlanView = z.looseObject({
  metadata: meta,
  spec: z.looseObject({
    clusterServiceVersionNames: z.array(z.string()).default([]),
    approval: z.string().optional(),
    approved: z.boolean().optional(),
  }),
  status: z
    .looseObject({
      phase: z.string().optional(),
      message: z.string().optional(),
      conditions: z.array(condition).optional(),
      plan: z
        .array(
          z.looseObject({
            resolving: z.string().optional(),
            status: z.string().optional(),
            message: z.string().optional(),
            resource: z.looseObject({ kind: z.string(), name: z.string() }).optional(),
          }),
        )
        .optional(),
      bundleLookups: z
        .array(
          z.looseObject({
            identifier: z.string().optional(),
            conditions: z.array(condition).optional(),
          }),
        )
        .optional(),
    })
    .optional(),
});
export type InstallPlanView = z.infer<typeof installPlanView>;

/** The fields of a ClusterServiceVersion the plugin reads. */
export const csvView = z.looseObject({
  metadata: meta,
  spec: z.looseObject({
    version: z.string().optional(),
    displayName: z.string().optional(),
    customresourcedefinitions: z
      .looseObject({ owned: z.array(z.looseObject({ name: z.string() })).optional() })
      .optional(),
    install: z
      .looseObject({
        spec: z
          .looseObject({
            deployments: z.array(z.looseObject({ name: z.string() })).optional(),
          })
          .optional(),
      })
      .optional(),
  }),
  status: z
    .looseObject({
      phase: z.string().optional(),
      reason: z.string().optional(),
      message: z.string().optional(),
      requirementStatus: z
        .array(
          z.looseObject({
            kind: z.string().optional(),
            name: z.string().optional(),
            status: z.string().optional(),
            message: z.string().optional(),
          }),
        )
        .optional(),
    })
    .optional(),
});
export type CsvView = z.infer<typeof csvView>;

/** The fields of a CatalogSource the plugin reads. */
export const catalogSourceView = z.looseObject({
  metadata: meta,
  spec: z.looseObject({
    sourceType: z.string().optional(),
    address: z.string().optional(),
    image: z.string().optional(),
    displayName: z.string().optional(),
    publisher: z.string().optional(),
    priority: z.number().optional(),
  }),
  status: z
    .looseObject({
      message: z.string().optional(),
      reason: z.string().optional(),
      connectionState: z
        .looseObject({
          address: z.string().optional(),
          lastObservedState: z.string().optional(),
        })
        .optional(),
      registryService: z
        .looseObject({
          serviceName: z.string().optional(),
          serviceNamespace: z.string().optional(),
          port: z.string().optional(),
        })
        .optional(),
    })
    .optional(),
});
export type CatalogSourceView = z.infer<typeof catalogSourceView>;

/** The fields of an OperatorGroup the plugin reads. */
export const operatorGroupView = z.looseObject({
  metadata: meta,
  spec: z.looseObject({ targetNamespaces: z.array(z.string()).optional() }).optional(),
});
export type OperatorGroupView = z.infer<typeof operatorGroupView>;

/** The fields of a PackageManifest (packages.operators.coreos.com/v1) the plugin reads. */
export const packageManifestView = z.looseObject({
  metadata: meta,
  status: z.looseObject({
    catalogSource: z.string().optional(),
    catalogSourceDisplayName: z.string().optional(),
    catalogSourceNamespace: z.string().optional(),
    catalogSourcePublisher: z.string().optional(),
    packageName: z.string().optional(),
    defaultChannel: z.string().optional(),
    provider: z.looseObject({ name: z.string().optional() }).optional(),
    channels: z
      .array(
        z.looseObject({
          name: z.string(),
          currentCSV: z.string().optional(),
          currentCSVDesc: z
            .looseObject({
              version: z.string().optional(),
              displayName: z.string().optional(),
              description: z.string().optional(),
              installModes: z
                .array(z.looseObject({ type: z.string(), supported: z.boolean() }))
                .optional(),
            })
            .optional(),
          entries: z
            .array(z.looseObject({ name: z.string(), version: z.string().optional() }))
            .optional(),
        }),
      )
      .default([]),
  }),
});
export type PackageManifestView = z.infer<typeof packageManifestView>;

/** The fields of a Deployment the plugin reads. */
export const deploymentView = z.looseObject({
  metadata: meta,
  spec: z
    .looseObject({
      replicas: z.number().optional(),
      selector: z
        .looseObject({ matchLabels: z.record(z.string(), z.string()).optional() })
        .optional(),
    })
    .optional(),
  status: z
    .looseObject({
      replicas: z.number().optional(),
      readyReplicas: z.number().optional(),
      availableReplicas: z.number().optional(),
      conditions: z.array(condition).optional(),
    })
    .optional(),
});
export type DeploymentView = z.infer<typeof deploymentView>;

/** A Pod's readiness, for `why`. */
export const podView = z.looseObject({
  metadata: meta,
  status: z
    .looseObject({
      phase: z.string().optional(),
      conditions: z.array(condition).optional(),
      containerStatuses: z
        .array(
          z.looseObject({
            name: z.string(),
            ready: z.boolean().optional(),
            restartCount: z.number().optional(),
            state: z
              .record(z.string(), z.looseObject({ reason: z.string().optional() }))
              .optional(),
          }),
        )
        .optional(),
    })
    .optional(),
});
export type PodView = z.infer<typeof podView>;
