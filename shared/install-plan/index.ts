// InstallPlan steps, one home for both sides: the plan function writes them (plan-steps.ts,
// permissions.ts), the install function executes them (step-kinds.ts, step-resource.ts).
export {
  BundleManifestError,
  dependencySubscriptionName,
  planSteps,
  type PlannedBundle,
} from './plan-steps.js';
export { permissionsHash, rbacForCsv } from './permissions.js';
export { stepKinds, type StepKind, type StepOwnership } from './step-kinds.js';
export {
  StepManifestError,
  apiVersionOf,
  groupVersionOf,
  manifestOf,
  objectKindOf,
  stepKindOf,
} from './step-resource.js';
