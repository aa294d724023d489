// The fault hooks over HTTP, for tests and benchmarks that run the devcluster in another process
// (`olmq devcluster`): /devcluster/faults to inject, list and end faults, and
// /devcluster/serviceaccounts/<namespace>/<name>/token-rotation to rotate a token. Admin only
// (system:masters); bad input is a 400 naming the field.
import { z } from 'zod';
import type { FaultAdmin, FaultAdminAnswer } from './server/http/types.js';
import type { FaultHooks, FaultRule, InjectedFault } from './types.js';

const faultRuleSchema = z.strictObject({
  verbs: z.array(z.string()).optional(),
  resources: z.array(z.string()).optional(),
  namespaces: z.array(z.string()).optional(),
  userAgent: z.string().optional(),
  action: z.discriminatedUnion('kind', [
    z.strictObject({
      kind: z.literal('answer'),
      code: z.union([z.literal(429), z.literal(500), z.literal(503)]),
      retryAfterSeconds: z.number().int().min(0).optional(),
    }),
    z.strictObject({ kind: z.literal('delay'), ms: z.number().int().min(0).max(600_000) }),
    z.strictObject({ kind: z.literal('drop') }),
    z.strictObject({ kind: z.literal('stall') }),
  ]),
  forMs: z.number().int().positive().optional(),
  count: z.number().int().positive().optional(),
});

const rotationPath = /^\/devcluster\/serviceaccounts\/([^/]+)\/([^/]+)\/token-rotation$/;

/** Serves the fault hooks' admin endpoint. */
export class FaultAdminEndpoint implements FaultAdmin {
  private readonly injected = new Map<string, { rule: FaultRule; fault: InjectedFault }>();
  private next = 1;

  constructor(private readonly faults: FaultHooks) {}

  answer(method: string, path: string, body: unknown): FaultAdminAnswer {
    if (path === '/devcluster/faults') {
      if (method === 'GET') return { code: 200, body: { items: this.list() } };
      if (method === 'DELETE') {
        this.faults.clearFaults();
        this.injected.clear();
        return { code: 200, body: { items: [] } };
      }
      if (method === 'POST') return this.inject(body);
    }
    const one = /^\/devcluster\/faults\/(\d+)$/.exec(path);
    if (one !== null && method === 'DELETE') {
      const entry = this.injected.get(one[1] ?? '');
      if (entry === undefined) return bad(404, `no fault ${one[1]}`);
      entry.fault.end();
      return { code: 200, body: { id: one[1], hits: entry.fault.hits, active: false } };
    }
    const rotation = rotationPath.exec(path);
    if (rotation !== null && method === 'POST') {
      const [namespace, name] = [
        decodeURIComponent(rotation[1] ?? ''),
        decodeURIComponent(rotation[2] ?? ''),
      ];
      try {
        return {
          code: 201,
          body: { token: this.faults.rotateServiceAccountToken(namespace, name) },
        };
      } catch (error) {
        return bad(404, (error as Error).message);
      }
    }
    return bad(404, `no fault endpoint ${method} ${path}`);
  }

  private inject(body: unknown): FaultAdminAnswer {
    const parsed = faultRuleSchema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue === undefined ? '' : issue.path.join('.');
      return bad(
        400,
        `invalid fault rule: ${field === '' ? '' : `${field}: `}${issue?.message ?? 'invalid'}`,
      );
    }
    const rule = parsed.data as FaultRule;
    const id = String(this.next++);
    this.injected.set(id, { rule, fault: this.faults.inject(rule) });
    return { code: 201, body: { id } };
  }

  private list(): unknown[] {
    return [...this.injected].map(([id, { rule, fault }]) => ({
      id,
      rule,
      hits: fault.hits,
      active: fault.active,
    }));
  }
}

function bad(code: 400 | 404, message: string): FaultAdminAnswer {
  return { code, body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', message, code } };
}
