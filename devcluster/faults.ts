// Fault injection for deterministic failure tests: forced 409s, expired and dropped watches,
// API brownouts (429 with Retry-After, 500, 503), slow answers, dropped connections, stalled
// watches, and ServiceAccount token rotation.
import type { ConflictInjector } from './api/types.js';
import type { IssuedToken } from './auth/index.js';
import { storageKey } from './resources/registry.js';
import type { FaultAction, FaultedRequest, RequestFaults } from './server/http/types.js';
import type { ApiResponse } from './server/transport.js';
import type { ObjectStore } from './storage/store.js';
import type { WatchHub } from './storage/watch.js';
import type { FaultHooks, FaultRule, InjectedFault, ObjectTarget } from './types.js';

/** The request verbs that change objects (for FaultRule.verbs). */
export const writeVerbs = ['create', 'update', 'patch', 'delete', 'deletecollection'] as const;

/** What token rotation needs from the cluster. */
export interface TokenIssuer {
  /** The ServiceAccount's uid, if it exists. */
  uid(namespace: string, name: string): string | undefined;
  /** A token of the account, issued now, valid `seconds`. */
  issue(account: { namespace: string; name: string; uid: string }, seconds: number): string;
}

class Injected implements InjectedFault {
  hits = 0;
  private ended = false;
  private readonly until: number;

  constructor(
    readonly rule: FaultRule,
    private readonly onEnd: (fault: Injected) => void,
  ) {
    this.until = rule.forMs === undefined ? Infinity : Date.now() + rule.forMs;
  }

  get active(): boolean {
    return (
      !this.ended &&
      Date.now() < this.until &&
      (this.rule.count === undefined || this.hits < this.rule.count)
    );
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.onEnd(this);
  }

  matches(request: FaultedRequest): boolean {
    const { verbs, resources, namespaces, userAgent } = this.rule;
    if (verbs !== undefined && !verbs.includes(request.verb)) return false;
    if (
      resources !== undefined &&
      !resources.includes(request.resource) &&
      !resources.includes(`${request.group}/${request.resource}`)
    )
      return false;
    if (namespaces !== undefined && !namespaces.includes(request.namespace)) return false;
    if (userAgent !== undefined && !request.userAgent.startsWith(userAgent)) return false;
    return true;
  }
}

/** The fault hooks over a store and watch hub, also the core's conflict injector and the router's request faults. */
export class Faults implements FaultHooks, ConflictInjector, RequestFaults {
  private readonly conflicts = new Map<string, number>();
  private rules: Injected[] = [];
  private readonly stalled = new Set<ApiResponse>();
  /** Per ServiceAccount: tokens issued up to this second are refused, except `keep`. */
  private readonly rotations = new Map<string, { upTo: number; keep: string }>();

  constructor(
    private readonly store: ObjectStore,
    private readonly hub: WatchHub,
    private readonly tokens?: TokenIssuer,
  ) {}

  conflictNextWrites(target: ObjectTarget, count: number): void {
    this.conflicts.set(
      `${storageKey(target.group, target.resource)}|${target.namespace}|${target.name}`,
      count,
    );
  }

  expireWatches(): void {
    this.store.expireHistory();
  }

  dropWatches(): void {
    this.hub.closeAll();
    this.releaseStalled();
  }

  inject(rule: FaultRule): InjectedFault {
    const fault = new Injected(rule, (ended) => {
      this.rules = this.rules.filter((r) => r !== ended);
      if (
        ended.rule.action.kind === 'stall' &&
        !this.rules.some((r) => r.rule.action.kind === 'stall')
      )
        this.releaseStalled();
    });
    this.rules.push(fault);
    return fault;
  }

  clearFaults(): void {
    for (const rule of [...this.rules]) rule.end();
    this.releaseStalled();
  }

  actionFor(request: FaultedRequest): FaultAction | undefined {
    if (this.rules.length === 0) return undefined;
    for (const rule of this.rules) {
      if (!rule.active) continue;
      if (rule.rule.action.kind === 'stall' && request.verb !== 'watch') continue;
      if (!rule.matches(request)) continue;
      rule.hits++;
      return rule.rule.action;
    }
    return undefined;
  }

  hold(res: ApiResponse): void {
    this.stalled.add(res);
    res.onClose(() => this.stalled.delete(res));
  }

  // Ends held watch answers: the client sees its watch end and resumes.
  private releaseStalled(): void {
    for (const res of this.stalled) if (!res.ended && !res.gone) res.end();
    this.stalled.clear();
  }

  rotateServiceAccountToken(namespace: string, name: string): string {
    const tokens = this.tokens;
    if (tokens === undefined) throw new Error('this devcluster cannot issue tokens');
    const uid = tokens.uid(namespace, name);
    if (uid === undefined) throw new Error(`serviceaccount ${namespace}/${name} does not exist`);
    const token = tokens.issue({ namespace, name, uid }, 365 * 24 * 3600);
    const claims = JSON.parse(
      Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'),
    ) as { jti: string; iat: number };
    this.rotations.set(`${namespace}/${name}`, { upTo: claims.iat, keep: claims.jti });
    return token;
  }

  /** For authentication: whether a token was revoked by a rotation. */
  readonly tokenRevoked = (token: IssuedToken): boolean => {
    const rotation = this.rotations.get(`${token.namespace}/${token.name}`);
    // Tokens issued in the rotation's second by other means are refused too (iat has 1 s grain).
    return rotation !== undefined && token.issuedAt <= rotation.upTo && token.jti !== rotation.keep;
  };

  takeConflict(key: string, namespace: string, name: string): boolean {
    const k = `${key}|${namespace}|${name}`;
    const left = this.conflicts.get(k) ?? 0;
    if (left <= 0) return false;
    if (left === 1) this.conflicts.delete(k);
    else this.conflicts.set(k, left - 1);
    return true;
  }
}
