// The plan function: InstallPlans from resolutions (see README.md).
export { createFunction } from './definition.js';
export { planKey } from './keys.js';
