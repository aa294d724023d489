// The resolve function: namespace resolution (see README.md).
export { createFunction, loadSnapshot, resolveKey } from './definition.js';
