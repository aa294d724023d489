// Cell helpers of server-side Table columns shared by the built-in kinds: reading fields of an
// object, ages as kubectl prints them, and the Age column.
import type { JsonObject } from '../../shared/kube/json.js';
import { humanDuration } from '../../shared/kube/time.js';
import type { PrinterColumn, ScaleMapping, VersionConversion } from './types.js';

/** Age as kubectl prints it (apimachinery's HumanDuration). */
export function formatAge(timestamp: string | undefined, now: number): string {
  if (timestamp === undefined) return '<unknown>';
  return humanDuration(Math.max(0, Math.floor((now - Date.parse(timestamp)) / 1000)));
}

/** Table cell helper. */
export function field(object: JsonObject, ...path: string[]): unknown {
  let current: unknown = object;
  for (const key of path) {
    if (typeof current !== 'object' || current === null || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** Table cell helper. */
export function num(object: JsonObject, ...path: string[]): number {
  const value = field(object, ...path);
  return typeof value === 'number' ? value : 0;
}

/** Table cell helper. */
export function str(object: JsonObject, ...path: string[]): string {
  const value = field(object, ...path);
  return typeof value === 'string' ? value : '';
}

/** Table cell helper. */
export function count(object: JsonObject, ...path: string[]): number {
  const value = field(object, ...path);
  if (Array.isArray(value)) return value.length;
  if (typeof value === 'object' && value !== null) return Object.keys(value).length;
  return 0;
}

/** Whether the object's status carries the condition `type` with status True. */
export function conditionTrue(object: JsonObject, type: string): boolean {
  const conditions = field(object, 'status', 'conditions');
  return (
    Array.isArray(conditions) &&
    conditions.some(
      (c) => str(c as JsonObject, 'type') === type && str(c as JsonObject, 'status') === 'True',
    )
  );
}

/** Table cell helper. */
export function containerField(object: JsonObject, key: string, ...specPath: string[]): string {
  const containers = field(object, ...specPath, 'containers');
  if (!Array.isArray(containers)) return '';
  return containers.map((c) => str(c as JsonObject, key)).join(',');
}

/** Table cell helper. */
export function selectorText(selector: unknown): string {
  const labels = field({ s: selector as JsonObject }, 's', 'matchLabels');
  if (typeof labels !== 'object' || labels === null) return '<none>';
  return Object.entries(labels as Record<string, unknown>)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : ''}`)
    .join(',');
}

/** Table cell helper. */
export const ageColumn: PrinterColumn = {
  name: 'Age',
  type: 'string',
  description:
    'CreationTimestamp is a timestamp representing the server time when this object was created.',
  cell: (o, now) => formatAge(str(o, 'metadata', 'creationTimestamp') || undefined, now),
};

/** How a built-in kind is declared (see builtin.ts). */
export interface BuiltinSpec {
  group: string;
  version: string;
  resource: string;
  kind: string;
  singular: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  verbs?: readonly string[];
  status?: boolean;
  scale?: ScaleMapping;
  extra?: string[];
  generation?: boolean;
  virtual?: boolean;
  columns?: PrinterColumn[];
  /** Served from another version's storage. */
  conversion?: VersionConversion;
}
