// The operator function: the Operator API (see README.md).
export { createFunction, loadAdoption, loadOperator } from './function.js';
export { adoptionKey, operatorKey } from './keys.js';
