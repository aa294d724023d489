// The install-plan room: InstallPlan execution. Its definition, and the contract of its pass.
export { installPlanFunction } from './definition.js';
export type { ServedInstallPlan, PlanSnapshot, PlanWrites } from './types.js';
