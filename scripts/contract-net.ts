/**
 * Runs the contract-net example against a running server: deploys a manager
 * and its contractors (examples/agents/contract-manager.ts, contractor.ts),
 * tells each contractor its bid, asks the manager to contract a task, prints
 * the conversation as the server carries it, then the outcome, and
 * undeploys the agents.
 *
 *   node --import tsx scripts/contract-net.ts [--server HOST:PORT] [--task NAME] [--bids 40,25,busy] [--keep]
 *
 * `--bids` gives one contractor per entry: a price, or `busy` for one that
 * refuses. The server is found as `svc` finds it (--server, the current
 * context, SVC_GRPC_ADDR, ./svc.toml). Exit 0 when the task was awarded and
 * done, 1 when the manager reported a failure or nothing came in time.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import type { GrpcClient } from '../src/api/grpc/grpc-client.js';
import type { ProtoMessage } from '../src/api/grpc/grpc-translate.js';
import { processIo } from '../src/cli/cli-io.js';
import { withRemote } from '../src/cli/remote.js';
import { createRealClock, type Clock } from '../supervisors/index.js';
import { ensureExamplesBuilt } from './build-examples.js';

/** The whole negotiation takes a few executions; a minute leaves room for a slow start of the agents. */
const OUTCOME_TIMEOUT_MS = 60_000;
const DEFAULT_BIDS = '40,25,busy';

export interface ContractNetOptions {
  task: string;
  bids: readonly string[];
  keep: boolean;
  out(text: string): void;
  clock: Clock;
}

export interface Outcome {
  awarded: boolean;
  /** The manager's last message to the client. */
  report: string;
}

function moduleOf(paths: Map<string, string>, name: string): Uint8Array {
  const path = paths.get(name);
  if (path === undefined) throw new Error(`examples/agents/${name}.ts was not built`);
  return new Uint8Array(readFileSync(path));
}

/** Each id as the agent's name, the client as `client`, padded so the columns line up. */
function namer(names: Map<string, string>): (id: string) => string {
  const width = Math.max(...[...names.values()].map((n) => n.length), 'client'.length);
  return (id) => (names.get(id) ?? (id.startsWith('client:') ? 'client' : id)).padEnd(width);
}

/** Subscribes to the manager's messages; resolves with the stream once the server confirmed it, so nothing sent after is missed. */
function follow(client: GrpcClient, agentId: string, onMessage: (message: ProtoMessage) => void) {
  const call = client.subscribe({ agent_id: agentId });
  call.on('data', onMessage);
  call.on('error', () => undefined);
  return new Promise<typeof call>((resolve, reject) => {
    call.once('metadata', () => resolve(call));
    call.once('error', reject);
  });
}

export async function runContractNet(client: GrpcClient, options: ContractNetOptions): Promise<Outcome> {
  const { out, clock } = options;
  const modules = await ensureExamplesBuilt();
  const run = Math.floor(Math.random() * 0x1_0000).toString(16);
  const manager = (await client.deploy({ name: `cnet-manager-${run}`, wasm_module: moduleOf(modules, 'contract-manager') })).agent_id;
  const names = new Map([[manager, 'manager']]);
  const contractors: string[] = [];
  try {
    for (const [i] of options.bids.entries()) {
      const label = `contractor-${String.fromCharCode(97 + i)}`;
      const id = (await client.deploy({ name: `cnet-${label}-${run}`, wasm_module: moduleOf(modules, 'contractor') })).agent_id;
      contractors.push(id);
      names.set(id, label);
    }
    const name = namer(names);
    out(`deployed ${[manager, ...contractors].map((id) => `${name(id).trim()} (${id})`).join(', ')}\n`);
    for (const [i, bid] of options.bids.entries()) {
      await client.send({ receiver: contractors[i] ?? '', message_type: 'inform', content: bid === 'busy' ? 'busy' : `price:${bid}` });
    }
    out(`bids: ${options.bids.map((bid, i) => `${name(contractors[i] ?? '').trim()} ${bid === 'busy' ? 'refuses' : bid}`).join(', ')}\n\n`);

    let settle: (outcome: Outcome) => void = () => undefined;
    const outcome = new Promise<Outcome>((resolve) => (settle = resolve));
    const stream = await follow(client, manager, (message) => {
      out(`${name(message.sender)} -> ${name(message.receiver)}  ${message.message_type.padEnd(15)}  ${message.content}\n`);
      if (message.sender === manager && message.receiver.startsWith('client:')) {
        if (message.message_type === 'inform') settle({ awarded: true, report: message.content });
        else if (message.message_type === 'failure' || message.message_type === 'refuse') settle({ awarded: false, report: message.content });
      }
    });
    const timer = clock.setTimeout(() => settle({ awarded: false, report: `no outcome within ${OUTCOME_TIMEOUT_MS / 1000} s` }), OUTCOME_TIMEOUT_MS);
    try {
      await client.send({ receiver: manager, message_type: 'request', protocol: 'fipa-contract-net', content: [options.task, ...contractors].join(' ') });
      const result = await outcome;
      const winner = /awarded to (\S+) at (\d+)/.exec(result.report);
      out(`\noutcome: ${result.awarded && winner ? `${options.task} awarded to ${name(winner[1] ?? '').trim()} at ${winner[2] ?? ''}` : `no contract: ${result.report}`}\n`);
      return result;
    } finally {
      clock.clearTimeout(timer);
      stream.cancel();
    }
  } finally {
    if (!options.keep) await Promise.allSettled([manager, ...contractors].map((id) => client.undeploy(id)));
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { server: { type: 'string' }, task: { type: 'string', default: 'deliver-parcel' }, bids: { type: 'string', default: DEFAULT_BIDS }, keep: { type: 'boolean', default: false } },
    strict: true,
  });
  const bids = values.bids.split(',').map((b) => b.trim());
  if (bids.length === 0 || bids.some((b) => b !== 'busy' && !/^\d{1,6}$/.test(b))) throw new Error(`--bids takes prices (0 to 999999) and 'busy', comma-separated; got '${values.bids}'`);
  if (!/^[\w.-]+$/.test(values.task)) throw new Error(`--task takes one word (letters, digits, '.', '_', '-'); got '${values.task}'`);
  const io = processIo();
  return withRemote(values, io, async ({ grpc }) => {
    const outcome = await runContractNet(grpc(), { task: values.task, bids, keep: values.keep, out: io.out, clock: createRealClock() });
    return outcome.awarded ? 0 : 1;
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    (code) => (process.exitCode = code),
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : err);
      process.exitCode = 1;
    },
  );
}
