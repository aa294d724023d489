// One CSV in a namespace pass, as each step of its decision sees it, and the two answers a step
// gives: stay (no write), or move the CSV to a phase (its status, with the phase history).
import type { CsvPhase, CsvReason } from '../../../shared/api/codes.js';
import type { Csv, Transition } from '../csv-status.js';
import { transitioned } from '../csv-status.js';
import type { ServingCertificate } from '../certificates.js';
import type { Strategy } from './strategy.js';
import type { CsvNamespaceSnapshot, CsvWrites } from './types.js';

/** A CSV in its namespace pass: what the gates read. */
export interface CsvInPass {
  csv: Csv;
  s: CsvNamespaceSnapshot;
  /** The CSV's name. */
  name: string;
}

/** A CSV its OperatorGroup has taken in: what the phase steps read. */
export interface CsvInPhase extends CsvInPass {
  /** The namespace's one OperatorGroup, and the namespaces it targets ("" for all). */
  group: CsvNamespaceSnapshot['operatorGroups'][number];
  targets: readonly string[];
  phase: CsvPhase;
  reason: CsvReason | '';
  /** The parsed install strategy, or why it is invalid. */
  strategy: Strategy | { invalid: string };
  /** The live CSV whose spec.replaces names this one, if any. */
  replacement: Csv | undefined;
}

/** A CSV whose install strategy is valid. */
export interface CsvWithStrategy extends CsvInPhase {
  strategy: Strategy;
}

/** No write for the CSV in this pass. */
export const stay = (c: CsvInPass): CsvWrites => ({ csv: c.csv, writes: [] });

/** The CSV moves to `t` (no status write when phase, reason and message stay). */
export function move(c: CsvInPass, t: Transition, extra: Partial<CsvWrites> = {}): CsvWrites {
  const status = transitioned(c.csv, t, c.s.now);
  const unchanged = status === c.csv.status || status === undefined;
  return { csv: c.csv, writes: [], ...(unchanged ? {} : { status }), ...extra };
}

/** The serving certificates of the CSV's deployments in this pass. */
export const certificatesOf = (c: CsvInPass): ReadonlyMap<string, ServingCertificate> | undefined =>
  c.s.certificates.get(c.name);
