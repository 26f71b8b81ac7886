#!/usr/bin/env node
// The `rookery` executable.
import { runCli } from './cli.js';

process.exitCode = await runCli(process.argv.slice(2));
