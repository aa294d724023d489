// `npm run bench -- NAME [ARGS...]`: runs one benchmark (dist/bench/NAME.js) with its own
// arguments and passes its JSON through; without a name, lists them. Each benchmark's file
// header says what it measures and which arguments it takes.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The benchmarks, with what each measures (one line). */
const benches: Record<string, { about: string; nodeFlags?: string[] }> = {
  'subscription-install': { about: 'Subscription → CSV Succeeded through every function' },
  backbone: { about: 'latency and throughput of the watcher → function → API path' },
  chaos: { about: 'N Subscriptions under an API brownout: convergence, lost/duplicated/dead' },
  'chaos-kill': {
    about: 'N Subscriptions while function replicas are SIGKILLed: lost/duplicated/dead',
  },
  'backbone-trips': { about: 'NATS round trips and messages per work item' },
  pools: { about: 'consumers per served cluster: open and join times, idle NATS and CPU cost' },
  rbac: { about: 'rbac and copy-csv at namespace scale' },
  install: { about: 'InstallPlan approved → CSV Succeeded' },
  'dead-work': { about: 'a v1beta1-CRD InstallPlan: time to retrying and to Failed' },
  devcluster: { about: 'devcluster creates/s, watch events/s, list latency' },
  'catalog-image': {
    about: 'catalog image pull + index, poll HEAD, bundle image pulls (catalog dir argument)',
  },
  registry: { about: 'registry gRPC serve and read of a large catalog (catalog dir argument)' },
  'bundle-images': {
    about: 'catalog image pull + index, bundle unpack, Subscription → CSV for an image-only bundle',
  },
  'catalog-real': { about: 'whole-catalog checks of a real catalog (--catalog DIR)' },
  resolver: { about: 'resolution over a large catalog', nodeFlags: ['--expose-gc'] },
  'catalog-index': { about: 'catalog index build/serialize/load', nodeFlags: ['--expose-gc'] },
  packageserver: { about: 'PackageManifests over a large catalog', nodeFlags: ['--expose-gc'] },
};

const [name, ...args] = process.argv.slice(2);
if (name === undefined || name === '--help' || name === '-h') {
  process.stdout.write('usage: npm run bench -- NAME [ARGS...]\n\n');
  for (const [bench, { about }] of Object.entries(benches))
    process.stdout.write(`  ${bench.padEnd(22)} ${about}\n`);
  process.exit(0);
}
const bench = benches[name];
const file = fileURLToPath(new URL(`./${name}.js`, import.meta.url));
if (bench === undefined || !existsSync(file)) {
  process.stderr.write(
    `bench: unknown benchmark "${name}" (one of: ${Object.keys(benches).join(', ')})\n`,
  );
  process.exit(2);
}
const child = spawn(process.execPath, [...(bench.nodeFlags ?? []), file, ...args], {
  stdio: 'inherit',
});
child.on('exit', (code, signal) => process.exit(code ?? (signal === null ? 1 : 128)));
