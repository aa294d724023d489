// `olmq devcluster --port P --kubeconfig FILE [--data-dir DIR]`: runs a devcluster in the
// foreground, writes its admin kubeconfig and prints a line containing "ready" once serving.
import type { Logger } from 'pino';
import { z } from 'zod';
import { startDevcluster } from './index.js';

/** Configuration of the devcluster command. */
export const devclusterCommandSchema = z
  .object({
    /** --port: TCP port (0 = any free port). */
    port: z.coerce.number().int().min(0).max(65535).default(0),
    /** --host: listen address. */
    host: z.string().min(1).default('127.0.0.1'),
    /** --kubeconfig: where to write the admin kubeconfig. */
    kubeconfig: z.string().min(1),
    /** --data-dir: durable storage; in memory when absent. */
    dataDir: z.string().min(1).optional(),
    /** --pod-ready-delay-ms: delay before simulated pods become Ready. */
    podReadyDelayMs: z.coerce.number().int().min(0).default(1000),
  })
  .strict();

/** Parsed configuration of the devcluster command. */
export type DevclusterCommandConfig = z.infer<typeof devclusterCommandSchema>;

/** Parses `--flag value` / `--flag=value` arguments into the command's config (throws ZodError naming the flag). */
export function parseDevclusterArgs(args: readonly string[]): DevclusterCommandConfig {
  const raw: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (!arg.startsWith('--')) throw new Error(`unexpected argument ${JSON.stringify(arg)}`);
    const [flag = '', inline] = arg.slice(2).split(/=(.*)/s, 2);
    const value = inline ?? args[++i];
    if (value === undefined) throw new Error(`flag --${flag} needs a value`);
    raw[flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())] = value;
  }
  return devclusterCommandSchema.parse(raw);
}

/** Runs the devcluster until SIGINT/SIGTERM; resolves after a clean shutdown. */
export async function runDevclusterCommand(
  config: DevclusterCommandConfig,
  logger?: Logger,
): Promise<void> {
  const cluster = await startDevcluster({
    port: config.port,
    host: config.host,
    podReadyDelayMs: config.podReadyDelayMs,
    ...(config.dataDir !== undefined ? { dataDir: config.dataDir } : {}),
    ...(logger !== undefined ? { logger } : {}),
  });
  await cluster.writeKubeconfig(config.kubeconfig);
  process.stdout.write(`devcluster ready at ${cluster.url} (kubeconfig ${config.kubeconfig})\n`);
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await cluster.close();
}

// Run directly: `node dist/devcluster/command.js --kubeconfig FILE ...` (tests and the owner's CLI).
if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  runDevclusterCommand(parseDevclusterArgs(process.argv.slice(2))).catch((error: unknown) => {
    process.stderr.write(`devcluster: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
