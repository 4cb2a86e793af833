/**
 * `svc agents deploy|list|get|undeploy`.
 */
import type { Agent } from '../agents/agent-service-types.js';
import { parseSize } from '../config/units.js';
import { EXIT } from './exit-codes.js';
import { readModuleFile } from './module-file.js';
import { agentDetails, agentsTable, json } from './output.js';
import { CALL_TIMEOUT_MS, exactlyOne, parseRemoteArgs, UsageError, withRemote } from './remote.js';

export const AGENTS_USAGE = `usage:
  svc agents deploy FILE.wasm --name NAME [--capability C]... [--memory-limit SIZE]
  svc agents list
  svc agents get AGENT_ID
  svc agents undeploy AGENT_ID
options: --server HOST:PORT  --output table|json  --config FILE
`;

/** Page size used to walk the whole list: the largest the server accepts, so a list is few round trips. */
const LIST_PAGE_SIZE = 1000;

async function deploy(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseRemoteArgs(args, {
    name: { type: 'string' },
    capability: { type: 'string', multiple: true },
    'memory-limit': { type: 'string' },
  });
  const file = exactlyOne(positionals, 'module file');
  if (values.name === undefined) throw new UsageError('--name is required');
  const memoryLimit = values['memory-limit'] === undefined ? 0 : parseSize(values['memory-limit']);
  if (memoryLimit === undefined) throw new UsageError(`--memory-limit takes a size (bytes, 64MiB, ...), got '${values['memory-limit']}'`);
  const wasm = readModuleFile(file);
  return withRemote(values, async ({ client, output, out }) => {
    const { agent_id } = await client.deploy(
      { name: values.name ?? '', wasm_module: wasm, capabilities: values.capability ?? [], resources: { memory_limit: memoryLimit } },
      { timeoutMs: CALL_TIMEOUT_MS },
    );
    // The bare id in table form, so `id=$(svc agents deploy ...)` works.
    out(output === 'json' ? json({ agent_id }) : `${agent_id}\n`);
    return EXIT.ok;
  });
}

async function list(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseRemoteArgs(args, {});
  if (positionals.length > 0) throw new UsageError('list takes no arguments');
  return withRemote(values, async ({ client, output, out }) => {
    const agents: Agent[] = [];
    let pageToken = '';
    do {
      const page = await client.list({ page_size: LIST_PAGE_SIZE, page_token: pageToken }, { timeoutMs: CALL_TIMEOUT_MS });
      agents.push(...page.agents);
      pageToken = page.next_page_token;
    } while (pageToken !== '');
    out(output === 'json' ? json({ agents }) : agentsTable(agents));
    return EXIT.ok;
  });
}

async function get(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseRemoteArgs(args, {});
  const agentId = exactlyOne(positionals, 'agent id');
  return withRemote(values, async ({ client, output, out }) => {
    const agent = await client.get(agentId, { timeoutMs: CALL_TIMEOUT_MS });
    out(output === 'json' ? json(agent) : agentDetails(agent));
    return EXIT.ok;
  });
}

async function undeploy(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseRemoteArgs(args, {});
  const agentId = exactlyOne(positionals, 'agent id');
  return withRemote(values, async ({ client, output, out }) => {
    await client.undeploy(agentId, { timeoutMs: CALL_TIMEOUT_MS });
    out(output === 'json' ? json({ agent_id: agentId, undeployed: true }) : `undeployed ${agentId}\n`);
    return EXIT.ok;
  });
}

export function agentsCommand(args: readonly string[]): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'deploy':
      return deploy(rest);
    case 'list':
      return list(rest);
    case 'get':
      return get(rest);
    case 'undeploy':
      return undeploy(rest);
    default:
      throw new UsageError(sub === undefined ? 'agents needs a subcommand' : `unknown agents subcommand '${sub}'`);
  }
}
