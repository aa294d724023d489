// kube-apiserver 1.30's built-in validation of the kinds the devcluster serves.
export { validateBuiltinKind } from './kinds.js';
export { validateAnnotations, validateLabels } from './meta.js';
export { QuantityError } from './quantity.js';
export type { KindValidation } from './types.js';
