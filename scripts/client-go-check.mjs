#!/usr/bin/env node
// The client-go check: upstream OLM's own controllers (the Go `olm` and `catalog` binaries, built
// from upstream's source by the peer kit) run against the devcluster, and their logs and the
// devcluster's request log are read for what a real client would trip over.
//
//   node scripts/client-go-check.mjs --kit PEER_KIT --upstream UPSTREAM_BIN [--runs N] [--keep DIR]
//
// PEER_KIT is the peer kit's folder (run.sh, build-upstream.sh); UPSTREAM_BIN the folder
// build-upstream.sh wrote. Needs a built checkout (npm run build). Prints one JSON line per run
// and a summary; exits 1 when a run shows a problem, 2 on bad arguments.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, URLSearchParams } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function usage(message) {
  process.stderr.write(
    `client-go-check: ${message}\nusage: node scripts/client-go-check.mjs --kit PEER_KIT --upstream UPSTREAM_BIN [--runs N] [--keep DIR]\n`,
  );
  process.exit(2);
}

function parseArguments(argv) {
  const options = { runs: 1 };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) usage(`${flag} needs a value`);
    if (flag === '--kit') options.kit = resolve(value);
    else if (flag === '--upstream') options.upstream = resolve(value);
    else if (flag === '--keep') options.keep = resolve(value);
    else if (flag === '--runs') options.runs = Number.parseInt(value, 10);
    else usage(`unknown option ${flag}`);
  }
  if (!options.kit || !existsSync(join(options.kit, 'run.sh')))
    usage('--kit must name the peer kit folder (with run.sh)');
  if (!options.upstream || !existsSync(join(options.upstream, 'olm')))
    usage('--upstream must name the folder build-upstream.sh wrote (with olm and catalog)');
  if (!(options.runs >= 1)) usage('--runs must be a positive number');
  if (!existsSync(join(repo, 'dist', 'cli', 'main.js'))) usage('build first: npm run build');
  return options;
}

/** The lines of a file, or none when it is missing. */
function lines(path) {
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n') : [];
}

/**
 * client-go wraps a watch stream's transport ending in the same words as a decode error; those
 * come from a controller closing its own connections as it stops, not from what the server sent.
 */
const transportEnd =
  /client connection force closed|response body closed|unexpected EOF|context canceled|use of closed network connection/;

/** client-go's own complaints: undecodable watch events and failed or ended reflectors. */
function controllerLogProblems(runDir) {
  const patterns = {
    decodeErrors: /unable to decode an event from the watch stream|unable to decode watch event/,
    listFailures: /failed to list \*/,
    watchFailures: /failed to watch \*|watch of \*.* ended with: (?!very short watch)/,
  };
  const counts = { decodeErrors: 0, listFailures: 0, watchFailures: 0 };
  const examples = [];
  for (const name of ['olm', 'catalog']) {
    for (const line of lines(join(runDir, 'logs', `${name}.err`))) {
      if (transportEnd.test(line)) continue;
      for (const [key, pattern] of Object.entries(patterns)) {
        if (!pattern.test(line)) continue;
        counts[key] += 1;
        if (examples.length < 5) examples.push(`${name}: ${line.slice(0, 300)}`);
      }
    }
  }
  return { counts, examples };
}

/** Path without its query, and whether the query asks for a watch. */
function splitUri(uri) {
  const at = uri.indexOf('?');
  const path = at < 0 ? uri : uri.slice(0, at);
  const query = new URLSearchParams(at < 0 ? '' : uri.slice(at + 1));
  return { path, query };
}

/**
 * The devcluster's answers (its debug request log): codes a correct server gives a correct
 * client only for bad input, and informers that list the same resource again and again (a
 * reflector relists when its watch breaks).
 */
function requestLogProblems(runDir) {
  const wrong = new Map();
  const reflectorLists = new Map();
  let requests = 0;
  for (const line of lines(join(runDir, 'logs', 'devcluster.err'))) {
    if (!line.includes('"msg":"request"')) continue;
    const entry = JSON.parse(line);
    requests += 1;
    const agent = String(entry.userAgent ?? '').split(' ')[0];
    if (!/^(olm|catalog)\//.test(agent) && !agent.startsWith('Go-http-client')) continue;
    const { path, query } = splitUri(entry.uri);
    const acceptable = entry.code < 400 || entry.code === 404 || entry.code === 409;
    if (!acceptable) {
      const key = `${entry.code} ${entry.verb} ${path} (${agent})`;
      wrong.set(key, (wrong.get(key) ?? 0) + 1);
    }
    const isList = entry.verb === 'GET' && query.get('watch') !== 'true' && query.has('limit');
    if (isList && query.get('resourceVersion') === '0') {
      const key = `${agent} ${path}`;
      reflectorLists.set(key, (reflectorLists.get(key) ?? 0) + 1);
    }
  }
  // One typed and one metadata-only informer may list the same resource once each.
  const relists = [...reflectorLists].filter(([, n]) => n > 2).map(([key, n]) => `${n}× ${key}`);
  return { requests, wrongAnswers: [...wrong].map(([key, n]) => `${n}× ${key}`), relists };
}

function checkRun(options, index) {
  const base = options.keep ?? mkdtempSync(join(tmpdir(), 'olmq-client-go-'));
  const runDir = join(base, `run-${index}`);
  const started = Date.now();
  const result = spawnSync('bash', [join(options.kit, 'run.sh'), 'upstream', runDir], {
    env: {
      ...process.env,
      OLMQ_DIR: repo,
      UPSTREAM_BIN: options.upstream,
      OLMQ_LOG_LEVEL: 'debug',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const scenario = lines(join(runDir, 'scenario.log'));
  const envLog = lines(join(runDir, 'env.log'));
  const logs = controllerLogProblems(runDir);
  const answers = requestLogProblems(runDir);
  const report = {
    run: index,
    seconds: Math.round((Date.now() - started) / 1000),
    exitCode: result.status,
    batchStubUsed: envLog.some((l) => /starting the Job stub|Job stub on/.test(l)),
    scenarioFailures: scenario.filter((l) => l.includes('FAIL:')),
    ...logs.counts,
    devclusterRequests: answers.requests,
    wrongAnswers: answers.wrongAnswers,
    relists: answers.relists,
    examples: logs.examples,
    dir: options.keep ? runDir : undefined,
  };
  if (!options.keep) rmSync(base, { recursive: true, force: true });
  report.ok =
    report.exitCode === 0 &&
    !report.batchStubUsed &&
    report.decodeErrors + report.listFailures + report.watchFailures === 0 &&
    report.wrongAnswers.length === 0 &&
    report.relists.length === 0 &&
    answers.requests > 0;
  return report;
}

const options = parseArguments(process.argv.slice(2));
const reports = [];
for (let i = 1; i <= options.runs; i += 1) {
  const report = checkRun(options, i);
  reports.push(report);
  process.stdout.write(`${JSON.stringify(report)}\n`);
}
const passed = reports.filter((r) => r.ok).length;
process.stdout.write(
  `${JSON.stringify({ runs: reports.length, ok: passed, decodeErrors: reports.reduce((n, r) => n + r.decodeErrors, 0) })}\n`,
);
process.exit(passed === reports.length ? 0 : 1);
