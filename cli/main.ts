#!/usr/bin/env node
// Entry point of the `olmq` command; subcommands are registered in ./commands.ts.
console.log('olmq');
