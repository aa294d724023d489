#!/usr/bin/env node
// `kubectl olmq`: the kubectl plugin of olmq. kubectl runs `kubectl-olmq` from PATH with the
// arguments after `olmq`; the package's bin installs it there. It talks only to the Kubernetes
// API — the OLM objects and the package server's PackageManifests — never to NATS.
import { runPlugin } from './commands.js';

const code = await runPlugin(process.argv.slice(2));
process.exitCode = code;
// Done: an idle keep-alive socket must not hold the process (kubectl waits for its plugin).
setTimeout(() => process.exit(code), 1_000).unref();
