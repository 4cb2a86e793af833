#!/usr/bin/env -S node --max-semi-space-size=64
/**
 * The `svc` executable: the command line of this process, its streams,
 * environment and signals, handed to the dispatcher.
 */
import { processIo } from './cli-io.js';
import { runCli } from './cli.js';

process.exitCode = await runCli(process.argv.slice(2), processIo());
