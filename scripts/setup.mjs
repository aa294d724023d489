#!/usr/bin/env node
// The set-up behind `npm start` and `npm test`: a fresh Debian machine with Node 20 needs no
// manual step. Plain Node with no dependencies, because it runs before `npm install`.
//
//   node scripts/setup.mjs start [olmq up flags...]   install, build, run `olmq up`
//   node scripts/setup.mjs test  [tap args...]        install, build, lint, type-check, tap
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const [mode, ...rest] = process.argv.slice(2);

function step(message) {
  process.stderr.write(`[setup] ${message}\n`);
}

function fail(message) {
  process.stderr.write(`[setup] error: ${message}\n`);
  process.exit(1);
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', ...options });
  if (result.error) fail(`could not run ${command}: ${result.error.message}`);
  return result.status ?? 1;
}

function mustRun(command, args, what) {
  const status = run(command, args);
  if (status !== 0) fail(`${what} failed (exit ${status})`);
}

function onPath(binary) {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .some((dir) => dir !== '' && existsSync(join(dir, binary)));
}

// npm deps: reinstall whenever package.json or the lockfile changed since the last install.
function ensureDependencies() {
  const stampFile = join(root, 'node_modules', '.olmq-setup-stamp');
  const hash = createHash('sha256');
  for (const file of ['package.json', 'package-lock.json']) {
    if (existsSync(join(root, file))) hash.update(readFileSync(join(root, file)));
  }
  const digest = hash.digest('hex');
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === digest) return;
  const useCi = existsSync(join(root, 'package-lock.json'));
  step(`installing npm dependencies (npm ${useCi ? 'ci' : 'install'})`);
  mustRun('npm', [useCi ? 'ci' : 'install', '--no-audit', '--no-fund'], 'npm install');
  writeFileSync(stampFile, digest);
}

// A program the system or its tests run, from Debian's package when it is not on PATH.
let aptUpdated = false;
function ensureDebianPackage({ binary, pkg, hint }) {
  if (onPath(binary)) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !onPath('apt-get')) {
    fail(
      `${binary} is not on PATH and cannot be installed automatically ` +
        `(${isRoot ? 'apt-get not found' : 'not running as root'}). ` +
        `Install it (Debian: \`sudo apt-get install ${pkg}\`)${hint ? ` ${hint}` : ''}.`,
    );
  }
  step(`installing ${pkg} from Debian packages (apt-get)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (!aptUpdated) mustRun('apt-get', ['update', '-qq'], 'apt-get update');
  aptUpdated = true;
  const status = run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', pkg], { env });
  if (status !== 0 || !onPath(binary)) {
    fail(`apt-get could not install ${pkg}; install it by hand${hint ? ` ${hint}` : ''}`);
  }
}

// nats-server: Debian's package when it is missing and no external NATS_URL is given.
function ensureNatsServer() {
  if (process.env.NATS_URL) {
    step(`using NATS at ${process.env.NATS_URL} (NATS_URL is set)`);
    return;
  }
  ensureDebianPackage({
    binary: 'nats-server',
    pkg: 'nats-server',
    hint: 'or set NATS_URL to a NATS server with JetStream',
  });
}

// The tests check the alerts and dashboards with promtool and a real Prometheus.
function ensurePrometheus() {
  ensureDebianPackage({ binary: 'promtool', pkg: 'prometheus' });
}

// docker-registry (distribution 2.8): the tests push and pull catalog and bundle images through
// a real registry, started on a free port (the package's own service is not used).
function ensureDockerRegistry() {
  ensureDebianPackage({ binary: 'docker-registry', pkg: 'docker-registry' });
}

// The test suite drives the devcluster with the real kubectl; say so plainly when it is absent.
function ensureKubectl() {
  if (onPath('kubectl')) return;
  fail(
    'kubectl is not on PATH. The test suite uses the real kubectl against the devcluster; ' +
      'install it (e.g. Debian package kubectl or google-cloud-cli) and run npm test again.',
  );
}

function testFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return testFiles(path);
      return entry.name.endsWith('.test.js') ? [path] : [];
    })
    .sort();
}

function build({ clean }) {
  // A clean build for tests, so compiled files of deleted tests never run.
  if (clean) rmSync(join(root, 'dist'), { recursive: true, force: true });
  step('building (tsc)');
  mustRun(join(root, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], 'TypeScript build');
}

switch (mode) {
  case 'start': {
    ensureDependencies();
    ensureNatsServer();
    build({ clean: false });
    const status = run(process.execPath, [join(root, 'dist', 'cli', 'main.js'), 'up', ...rest]);
    process.exit(status);
    break;
  }
  case 'test': {
    ensureDependencies();
    ensureNatsServer();
    ensurePrometheus();
    ensureDockerRegistry();
    ensureKubectl();
    build({ clean: true }); // tsc is also the type-check: the build fails on any type error
    step('linting (layers, eslint, prettier --check)');
    mustRun(process.execPath, [join(root, 'scripts', 'check-layers.mjs')], 'the layering check');
    mustRun(join(root, 'node_modules', '.bin', 'eslint'), ['.'], 'eslint');
    mustRun(join(root, 'node_modules', '.bin', 'prettier'), ['--check', '.'], 'prettier');
    step('running the test suite (tap)');
    const all = testFiles(join(root, 'dist', 'test')).map((file) => relative(root, file));
    const args = rest.length > 0 ? rest : all;
    process.exit(run(join(root, 'node_modules', '.bin', 'tap'), args));
    break;
  }
  default:
    fail('usage: node scripts/setup.mjs start|test [args...]');
}
