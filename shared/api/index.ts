// Public entry point of the OLM API: object schemas and their types, stable codes, validation.
// Sub-schemas (e.g. one install mode) are imported from their kind's module when needed.
export * as codes from './codes.js';
export {
  clusterServiceVersionSchema,
  type ClusterServiceVersion,
  type ClusterServiceVersionSpec,
  type ClusterServiceVersionStatus,
} from './clusterserviceversion.js';
export {
  installPlanSchema,
  type InstallPlan,
  type InstallPlanSpec,
  type InstallPlanStatus,
  type Step,
} from './installplan.js';
export {
  subscriptionSchema,
  type Subscription,
  type SubscriptionSpec,
  type SubscriptionStatus,
  type SubscriptionCondition,
  type SubscriptionCatalogHealth,
} from './subscription.js';
export {
  catalogSourceSchema,
  type CatalogSource,
  type CatalogSourceSpec,
  type CatalogSourceStatus,
} from './catalogsource.js';
export {
  operatorGroupSchema,
  operatorGroupV1alpha2Schema,
  upgradeStrategyOf,
  type OperatorGroup,
  type OperatorGroupV1alpha2,
} from './operatorgroup.js';
export { olmConfigSchema, OLM_CONFIG_NAME, type OlmConfig } from './olmconfig.js';
export {
  operatorSchema,
  type Operator,
  type OperatorStatus,
  type RichReference,
  type ComponentCondition,
} from './operator.js';
export {
  operatorConditionSchema,
  operatorConditionV1Schema,
  type OperatorCondition,
  type OperatorConditionV1,
} from './operatorcondition.js';
export {
  objectMetaSchema,
  conditionSchema,
  labelSelectorSchema,
  ownerReferenceSchema,
  objectReferenceSchema,
  type ObjectMeta,
  type Condition,
  type LabelSelector,
  type OwnerReference,
  type ObjectReference,
} from './meta.js';
export {
  parseObject,
  statusCauses,
  formatFieldPath,
  ObjectValidationError,
  type FieldIssue,
  type StatusCause,
  type CauseType,
} from './validation.js';
export { matchFieldNamesLikeGo } from './gojson.js';
