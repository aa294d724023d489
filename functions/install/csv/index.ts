// The csv room: the CSV lifecycle. Its definition, and the contract of its namespace pass.
export { csvFunction } from './definition.js';
export type { CsvNamespaceSnapshot, CsvNamespaceWrites, CsvWrites } from './types.js';
