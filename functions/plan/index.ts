// The plan function: InstallPlans from resolutions (see README.md).
export { createFunction, planKey } from './definition.js';
