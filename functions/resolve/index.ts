// The resolve function: namespace resolution (see README.md).
export { createFunction, loadSnapshot } from './definition.js';
export { resolveKey } from './keys.js';
