/**
 * `svc agents list [--watch]`: every agent, a page at a time. With `--watch`
 * the list is read again every `--interval` and printed again when it
 * changed: the API streams messages but not lifecycle transitions, so this
 * polls, through the injected clock.
 */
import type { Agent } from '../../agents/agent-service-types.js';
import type { GrpcClient } from '../../api/grpc/grpc-client.js';
import { parseDuration } from '../../config/units.js';
import type { CliIo } from '../cli-io.js';
import { defineCommand, UsageError } from '../command.js';
import { CONNECTION_FLAGS } from '../connection.js';
import { EXIT } from '../exit-codes.js';
import { agentsTable, agentsWideTable, OUTPUT_FLAG, render, renderStreamed, type OutputFormat } from '../output.js';
import { CALL_TIMEOUT_MS, withRemote } from '../remote.js';

/** The largest page the server gives, so a list is few round trips. */
const LIST_PAGE_SIZE = 1000;
/** kubectl's `--watch` shows changes as they happen; two seconds keeps a poll cheap and a change seen soon. */
const DEFAULT_WATCH_INTERVAL = '2s';
/** Moves the cursor home and clears the terminal, so a redrawn table replaces the last one. */
const CLEAR_SCREEN = '\x1b[H\x1b[2J';

async function listAll(client: GrpcClient): Promise<Agent[]> {
  const agents: Agent[] = [];
  let pageToken = '';
  do {
    const page = await client.list({ page_size: LIST_PAGE_SIZE, page_token: pageToken }, { timeoutMs: CALL_TIMEOUT_MS });
    agents.push(...page.agents);
    pageToken = page.next_page_token;
  } while (pageToken !== '');
  return agents;
}

function tables(agents: readonly Agent[]): { table: () => string; wide: () => string } {
  return { table: () => agentsTable(agents), wide: () => agentsWideTable(agents) };
}

/** A redraw: the whole list again, in place on a terminal, after a blank line elsewhere; a stream item for json and yaml. */
function redraw(io: CliIo, output: OutputFormat, agents: readonly Agent[], first: boolean): string {
  if (output === 'json' || output === 'yaml') return renderStreamed(output, { agents }, () => '');
  const text = render(output, { agents }, tables(agents));
  if (io.interactive) return `${CLEAR_SCREEN}${text}`;
  return first ? text : `\n${text}`;
}

/** Polls until Ctrl-C (exit 0) or a failed call (its exit code). */
function watch(io: CliIo, client: GrpcClient, output: OutputFormat, intervalMs: number): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let timer: unknown;
    let stopped = false;
    let shown: string | undefined;
    const stopListening = io.onInterrupt(() => {
      stopped = true;
      io.clock.clearTimeout(timer);
      resolve(EXIT.ok);
    });
    const poll = async (): Promise<void> => {
      try {
        const agents = await listAll(client);
        if (stopped) return;
        const seen = JSON.stringify(agents);
        if (seen !== shown) {
          io.out(redraw(io, output, agents, shown === undefined));
          shown = seen;
        }
        timer = io.clock.setTimeout(() => void poll(), intervalMs);
      } catch (error) {
        stopListening();
        if (!stopped) reject(error);
      }
    };
    void poll();
  });
}

export const agentsListCommand = defineCommand({
  path: ['agents', 'list'],
  summary: 'List the agents, oldest deploy first.',
  description: `-o wide adds the memory limit, node, module hash, capabilities and the time held back by the CPU quota. --watch prints the list again
whenever it changes (state, counters, agents deployed or undeployed) until Ctrl-C; on a terminal the
table is redrawn in place, and -o json prints one {"agents": [...]} line per change.`,
  args: [],
  flags: {
    watch: { type: 'boolean', short: 'w', description: 'Keep watching: print the list again whenever it changes.' },
    interval: { type: 'string', value: 'DURATION', description: `How often --watch reads the list: 500ms, 2s, 1m (default ${DEFAULT_WATCH_INTERVAL}).` },
    output: OUTPUT_FLAG,
    ...CONNECTION_FLAGS,
  },
  examples: [
    { description: 'List the agents', command: 'svc agents list' },
    { description: 'Watch them, with more columns', command: 'svc agents list -w -o wide' },
    { description: 'The ids of the failed agents', command: "svc agents list -o json | jq -r '.agents[] | select(.state == \"failed\") | .agent_id'" },
  ],
  async run({ values, io }) {
    const intervalMs = parseDuration(values.interval ?? DEFAULT_WATCH_INTERVAL);
    if (intervalMs === undefined || intervalMs <= 0) throw new UsageError(`--interval takes a positive duration (500ms, 2s, 1m), got '${values.interval}'`);
    if (values.interval !== undefined && !values.watch) throw new UsageError('--interval applies only with --watch');
    return withRemote(values, io, async ({ grpc, output }) => {
      if (values.watch) return watch(io, grpc(), output, intervalMs);
      const agents = await listAll(grpc());
      io.out(render(output, { agents }, tables(agents)));
      return EXIT.ok;
    });
  },
});
