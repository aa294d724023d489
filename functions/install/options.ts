// Options of the install function: one zod schema, defaults in one place, parsed once and
// frozen. Errors name the option.
import { z } from 'zod';
import { defaultCertificateLifetimeMs, rotationMarginMs } from './certificates.js';
import { defaultPlanRetryWindowMs } from './install-plan/settle.js';

/** The install function's options. */
export const installOptionsSchema = z.object({
  /**
   * Lifetime of the serving certificates (and their CA) issued for webhooks and owned
   * APIServices, in ms; they rotate a day before they expire, so it must exceed a day.
   */
  certificateLifetimeMs: z
    .int()
    .gt(
      rotationMarginMs,
      `must exceed the rotation margin of ${rotationMarginMs} ms (certificates rotate a day before they expire)`,
    )
    .default(defaultCertificateLifetimeMs),
  /**
   * How long an InstallPlan whose execution fails keeps retrying before it is Failed, in ms
   * (upstream's --install-plan-retry-timeout, one minute). Forbidden errors retry regardless.
   */
  installPlanRetryTimeoutMs: z.int().positive().default(defaultPlanRetryWindowMs),
});
/** Validated install options. */
export type InstallOptions = Readonly<z.infer<typeof installOptionsSchema>>;

/** A bad install option, named with what is wrong. */
export class InstallOptionsError extends Error {
  readonly retryable = false;
  constructor(message: string) {
    super(message);
    this.name = 'InstallOptionsError';
  }
}

/** Validates `input` (defaults filled in), or throws InstallOptionsError naming the option. */
export function parseInstallOptions(input: unknown = {}): InstallOptions {
  const parsed = installOptionsSchema.safeParse(input);
  if (!parsed.success) {
    const issues = parsed.error.issues.map(
      (i) => `install option ${i.path.join('.') || '(root)'}: ${i.message}`,
    );
    throw new InstallOptionsError(issues.join('; '));
  }
  return Object.freeze(parsed.data);
}
