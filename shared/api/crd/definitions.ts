// The CustomResourceDefinitions of operators.coreos.com, built from the zod schemas: names,
// scope, versions and printer columns as upstream OLM declares them (spec §1).
import type { z } from 'zod';
import { catalogSourceSchema } from '../catalogsource.js';
import { clusterServiceVersionSchema } from '../clusterserviceversion.js';
import { OLM_GROUP } from '../codes.js';
import { installPlanSchema } from '../installplan.js';
import { olmConfigSchema } from '../olmconfig.js';
import { operatorSchema } from '../operator.js';
import { operatorConditionSchema, operatorConditionV1Schema } from '../operatorcondition.js';
import { operatorGroupSchema, operatorGroupV1alpha2Schema } from '../operatorgroup.js';
import { subscriptionSchema } from '../subscription.js';
import { toOpenAPISchema, type OpenAPISchema } from './openapi.js';

/** An additionalPrinterColumns entry. */
export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
}

/** One served version of a kind and the zod schema of its objects. */
export interface KindVersion {
  name: string;
  storage: boolean;
  schema: z.core.$ZodType;
  printerColumns?: PrinterColumn[];
}

/** What a CRD is generated from. */
export interface KindDefinition {
  kind: string;
  plural: string;
  singular: string;
  shortNames?: string[];
  scope: 'Namespaced' | 'Cluster';
  versions: KindVersion[];
}

/** An apiextensions.k8s.io/v1 CustomResourceDefinition, as generated. */
export interface GeneratedCrd {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string };
  spec: {
    group: string;
    names: {
      categories: string[];
      kind: string;
      listKind: string;
      plural: string;
      shortNames?: string[];
      singular: string;
    };
    scope: 'Namespaced' | 'Cluster';
    versions: {
      additionalPrinterColumns?: PrinterColumn[];
      name: string;
      schema: { openAPIV3Schema: OpenAPISchema };
      served: true;
      storage: boolean;
      subresources: { status: Record<string, never> };
    }[];
  };
}

const csvColumns: PrinterColumn[] = [
  {
    name: 'Display',
    type: 'string',
    jsonPath: '.spec.displayName',
    description: 'The name of the CSV',
  },
  {
    name: 'Version',
    type: 'string',
    jsonPath: '.spec.version',
    description: 'The version of the CSV',
  },
  {
    name: 'Release',
    type: 'string',
    jsonPath: '.spec.release',
    description: 'The release of this version of the CSV',
  },
  {
    name: 'Replaces',
    type: 'string',
    jsonPath: '.spec.replaces',
    description: 'The name of a CSV that this one replaces',
  },
  { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
];

const installPlanColumns: PrinterColumn[] = [
  {
    name: 'CSV',
    type: 'string',
    jsonPath: '.spec.clusterServiceVersionNames[0]',
    description: 'The first CSV in the list of clusterServiceVersionNames',
  },
  {
    name: 'Approval',
    type: 'string',
    jsonPath: '.spec.approval',
    description: 'The approval mode',
  },
  { name: 'Approved', type: 'boolean', jsonPath: '.spec.approved' },
];

const catalogSourceColumns: PrinterColumn[] = [
  {
    name: 'Display',
    type: 'string',
    jsonPath: '.spec.displayName',
    description: 'The pretty name of the catalog',
  },
  {
    name: 'Type',
    type: 'string',
    jsonPath: '.spec.sourceType',
    description: 'The type of the catalog',
  },
  {
    name: 'Publisher',
    type: 'string',
    jsonPath: '.spec.publisher',
    description: 'The publisher of the catalog',
  },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];

const subscriptionColumns: PrinterColumn[] = [
  {
    name: 'Package',
    type: 'string',
    jsonPath: '.spec.name',
    description: 'The package subscribed to',
  },
  {
    name: 'Source',
    type: 'string',
    jsonPath: '.spec.source',
    description: 'The catalog source for the specified package',
  },
  {
    name: 'Channel',
    type: 'string',
    jsonPath: '.spec.channel',
    description: 'The channel of updates to subscribe to',
  },
];

/** The OLM kinds olmq serves, in a fixed order. */
export const kindDefinitions: readonly KindDefinition[] = [
  {
    kind: 'CatalogSource',
    plural: 'catalogsources',
    singular: 'catalogsource',
    shortNames: ['catsrc'],
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1alpha1',
        storage: true,
        schema: catalogSourceSchema,
        printerColumns: catalogSourceColumns,
      },
    ],
  },
  {
    kind: 'ClusterServiceVersion',
    plural: 'clusterserviceversions',
    singular: 'clusterserviceversion',
    shortNames: ['csv', 'csvs'],
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1alpha1',
        storage: true,
        schema: clusterServiceVersionSchema,
        printerColumns: csvColumns,
      },
    ],
  },
  {
    kind: 'InstallPlan',
    plural: 'installplans',
    singular: 'installplan',
    shortNames: ['ip'],
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1alpha1',
        storage: true,
        schema: installPlanSchema,
        printerColumns: installPlanColumns,
      },
    ],
  },
  {
    kind: 'OLMConfig',
    plural: 'olmconfigs',
    singular: 'olmconfig',
    scope: 'Cluster',
    versions: [{ name: 'v1', storage: true, schema: olmConfigSchema }],
  },
  {
    kind: 'Operator',
    plural: 'operators',
    singular: 'operator',
    scope: 'Cluster',
    versions: [{ name: 'v1', storage: true, schema: operatorSchema }],
  },
  {
    kind: 'OperatorCondition',
    plural: 'operatorconditions',
    singular: 'operatorcondition',
    shortNames: ['condition'],
    scope: 'Namespaced',
    versions: [
      { name: 'v1', storage: false, schema: operatorConditionV1Schema },
      { name: 'v2', storage: true, schema: operatorConditionSchema },
    ],
  },
  {
    kind: 'OperatorGroup',
    plural: 'operatorgroups',
    singular: 'operatorgroup',
    shortNames: ['og'],
    scope: 'Namespaced',
    versions: [
      { name: 'v1', storage: true, schema: operatorGroupSchema },
      { name: 'v1alpha2', storage: false, schema: operatorGroupV1alpha2Schema },
    ],
  },
  {
    kind: 'Subscription',
    plural: 'subscriptions',
    singular: 'subscription',
    shortNames: ['sub', 'subs'],
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1alpha1',
        storage: true,
        schema: subscriptionSchema,
        printerColumns: subscriptionColumns,
      },
    ],
  },
];

/** The openAPIV3Schema of one version: the walked zod schema with metadata left to the server. */
export function versionSchema(schema: z.core.$ZodType): OpenAPISchema {
  const root = toOpenAPISchema(schema);
  // The API server validates metadata itself; CRD schemas may only say it is an object.
  if (root.properties?.metadata !== undefined) root.properties.metadata = { type: 'object' };
  return root;
}

/** Builds the CustomResourceDefinition of one kind. */
export function buildCrd(definition: KindDefinition): GeneratedCrd {
  const names: GeneratedCrd['spec']['names'] = {
    categories: ['olm'],
    kind: definition.kind,
    listKind: `${definition.kind}List`,
    plural: definition.plural,
    singular: definition.singular,
  };
  if (definition.shortNames !== undefined) names.shortNames = [...definition.shortNames];
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${definition.plural}.${OLM_GROUP}` },
    spec: {
      group: OLM_GROUP,
      names,
      scope: definition.scope,
      versions: definition.versions.map((version) => {
        const out: GeneratedCrd['spec']['versions'][number] = {
          name: version.name,
          schema: { openAPIV3Schema: versionSchema(version.schema) },
          served: true,
          storage: version.storage,
          subresources: { status: {} },
        };
        if (version.printerColumns !== undefined) {
          return {
            additionalPrinterColumns: version.printerColumns.map((c) => ({ ...c })),
            ...out,
          };
        }
        return out;
      }),
    },
  };
}
