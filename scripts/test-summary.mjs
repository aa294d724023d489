#!/usr/bin/env node
// Prints the plain closing line CI reads, `N passed, N failed[, N skipped]`, from the TAP
// results tap saved for each test file (.tap/test-results). One top-level test = one count;
// a test file that crashed, timed out or left no results counts as one failure.
//
//   node scripts/test-summary.mjs <exit code of npm test>
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Parser } from 'tap-parser';

const root = fileURLToPath(new URL('..', import.meta.url));
const exitCode = Number(process.argv[2] ?? '0');

function walk(dir, keep) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? walk(path, keep) : keep(entry.name) ? [path] : [];
  });
}

const testFiles = walk(join(root, 'dist', 'test'), (name) => name.endsWith('.test.js'));
const resultsDir = join(root, '.tap', 'test-results');
let passed = 0;
let failed = 0;
let skipped = 0;
const broken = [];
const failures = [];

/** Collects the failing assertions at every depth as `test > subtest > assertion`. */
function watchFailures(parser, path, found) {
  parser.on('child', (child) => watchFailures(child, [...path, child.name], found));
  parser.on('assert', (result) => {
    if (result.ok || result.todo || result.skip) return;
    found.push([...path, result.name].filter(Boolean).join(' > '));
  });
}

for (const file of testFiles) {
  const resultFile = join(resultsDir, `${relative(root, file)}.tap`);
  if (!existsSync(resultFile)) {
    broken.push(`${relative(root, file)}: no results`);
    continue;
  }
  const parser = new Parser();
  let summary;
  const found = [];
  watchFailures(parser, [], found);
  parser.on('complete', (results) => (summary = results));
  parser.end(readFileSync(resultFile, 'utf8'));
  const skips = summary.skip + summary.todo;
  passed += summary.pass - skips;
  failed += summary.fail;
  // A failing subtest fails its parents too: name only the innermost ones.
  const innermost = found.filter((name) => !found.some((other) => other.startsWith(`${name} > `)));
  for (const name of innermost) failures.push(`${relative(root, file)}: ${name}`);
  skipped += skips;
  const planned = summary.plan?.end ?? -1;
  if (summary.bailout || planned !== summary.count) {
    broken.push(`${relative(root, file)}: ran ${summary.count} of plan ${planned}`);
  }
}

failed += broken.length;
// On stdout, just above the closing line, so that the tail CI keeps says what failed.
for (const line of failures) process.stdout.write(`[summary] failed: ${line}\n`);
for (const line of broken) process.stdout.write(`[summary] broken test file: ${line}\n`);
// npm test failed before or outside the tests (set-up, lint, build): that is a failure too.
if (exitCode !== 0 && failed === 0) failed = 1;
process.stdout.write(
  `${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}\n`,
);
