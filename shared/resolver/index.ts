// Public entry point of the resolver: pure resolution of one namespace's Subscriptions against
// its catalogs (see resolve.ts for the algorithm), and the builders of its input facts.
export { resolveNamespace } from './resolve.js';
export { channelChain } from './channel-chain.js';
export { withoutProvidedElsewhere, type CopiedCsvFacts } from './provided-elsewhere.js';
export { ResolutionProblemCode } from './model.js';
export type {
  ApiFact,
  BundleAction,
  CatalogSourceKey,
  InstalledCsvFacts,
  OperatorGroupFacts,
  PropertyFact,
  ResolvedBundle,
  ResolutionProblem,
  ResolutionWarning,
  Resolution,
  ResolverCatalog,
  ResolverInput,
  SubscriptionFacts,
} from './model.js';
export {
  subscriptionFacts,
  installedCsvFacts,
  operatorGroupFacts,
  visibleCatalogs,
  isCopiedCsv,
  copiedCsvFacts,
  parsePropertiesAnnotation,
  PropertiesAnnotationError,
} from './facts.js';
export {
  failForwardEnabled,
  lastInReplacementChain,
  replacedByFailure,
  replacedByUpgrade,
  replacementMapping,
  type ChainCsv,
} from './fail-forward.js';
