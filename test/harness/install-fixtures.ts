// Fixture types of the install function's unit tests. The decisions take the API's types
// (shared/api, as served); tests build partial objects on purpose (a decision reads only what a
// test sets, as it reads API objects narrowed without parsing), so those fixtures are typed
// loosely here and enter the typed decisions as they are.
/* eslint-disable @typescript-eslint/no-explicit-any -- partial fixtures of strictly typed API objects */
import type { CsvNamespaceSnapshot as Snapshot } from '../../functions/install/csv/types.js';

/** A ClusterServiceVersion fixture: any part of one. */
export type CsvObject = any;

/** An InstallPlan fixture: any part of one. */
export type InstallPlanObject = any;

/** A CSV namespace snapshot as tests write one: its fields, each a loose fixture. */
export type CsvNamespaceSnapshot = { [K in keyof Snapshot]: any };
