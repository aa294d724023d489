// The copy-csv function: copied CSVs in every namespace an operator's group targets, and the
// OLMConfig switch that turns them off for AllNamespaces operators. See README.md.
export { copyCsvDefinitions, createFunction, defaultCopyCsvOptions } from './function.js';
export { namespaceKey, olmConfigKey, sourceKey } from './keys.js';
export type { CopyCsvOptions } from './types.js';
