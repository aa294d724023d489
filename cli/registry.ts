// `olmq registry serve`: the operator-registry gRPC API over a File-Based Catalog directory or a
// catalog image (pulled once at start), for
// development (point a CatalogSource's spec.address at it) and as a registry upstream OLM can use.
import { resolve } from 'node:path';
import { CatalogError } from '../shared/catalog/index.js';
import { RegistryCatalog } from '../shared/registry/registry-catalog.js';
import { loadRegistryCatalog, startRegistryServer } from '../shared/registry/server.js';
import { CatalogImageError, catalogObjectsFromImage } from './catalog-image.js';
import { createLogger } from '../shared/runtime/log.js';
import { exitCodes, type CommandConfig } from './commands.js';
import { untilSignal } from './lifecycle.js';

/** Serves until SIGTERM/SIGINT; prints a line containing "serving" and the address once listening. */
export async function runRegistryServe(config: CommandConfig<'registryServe'>): Promise<number> {
  const log = createLogger('registry', config.logLevel);
  if ((config.fbc === undefined) === (config.image === undefined)) {
    process.stderr.write('olmq registry serve: give exactly one of --fbc DIR and --image REF\n');
    return exitCodes.usage;
  }
  const dir = config.image ?? resolve(config.fbc ?? '');
  const started = performance.now();
  let loaded;
  try {
    loaded =
      config.image === undefined
        ? await loadRegistryCatalog(dir)
        : RegistryCatalog.fromObjects(
            await catalogObjectsFromImage(config.image, '--image', config),
          );
  } catch (error) {
    if (error instanceof CatalogImageError) {
      process.stderr.write(`olmq registry serve: ${error.message}\n`);
      return exitCodes.usage;
    }
    if (!(error instanceof CatalogError)) throw error;
    process.stderr.write(`olmq registry serve: --fbc ${dir}: ${error.message}\n`);
    return exitCodes.usage;
  }
  const { catalog, warnings } = loaded;
  for (const w of warnings) {
    log.warn(
      { code: w.code, package: w.package, channel: w.channel, bundle: w.bundle, origin: w.origin },
      w.message,
    );
  }
  const packages = catalog.index.packages.length;
  const bundles = catalog.index.bundles.length;
  if (packages === 0)
    log.warn({ fbc: dir }, `no usable package in ${dir}: serving an empty catalog`);
  log.info(
    {
      fbc: dir,
      packages,
      bundles,
      warnings: warnings.length,
      loadMs: Math.round(performance.now() - started),
    },
    'catalog loaded',
  );

  let server;
  try {
    server = await startRegistryServer({
      catalog,
      host: config.host,
      port: config.port,
      logger: log,
    });
  } catch (error) {
    process.stderr.write(
      `olmq registry serve: cannot listen on ${config.host}:${config.port}: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return exitCodes.failed;
  }
  process.stdout.write(
    `registry serving api.Registry on ${server.address} (${dir}: ${packages} packages, ${bundles} bundles, ${warnings.length} warnings)\n`,
  );
  const signal = await untilSignal();
  log.info({ signal }, 'shutting down');
  await server.stop();
  return exitCodes.ok;
}
