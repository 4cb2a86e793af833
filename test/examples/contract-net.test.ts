/**
 * The contract-net example against a real server: scripts/contract-net.ts
 * as a real process prints the conversation (cfp → propose/refuse →
 * accept/reject → inform) and the outcome, lowest bid wins; in-process, the
 * manager reports a failure when nobody bids, and counts the platform's
 * failure for a contractor that does not exist as that contractor's answer.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { ensureExamplesBuilt } from '../../scripts/build-examples.js';
import { runContractNet } from '../../scripts/contract-net.js';
import { createRealClock } from '../../supervisors/index.js';
import type { ProtoMessage } from '../../src/api/grpc/grpc-translate.js';
import { startCliServer, type CliServer } from '../cli/cli-server.js';
import { scriptCommand } from '../helpers/script-command.js';

const run = promisify(execFile);
const SCRIPT = scriptCommand(import.meta.url, '../../scripts/contract-net');
const built = await ensureExamplesBuilt();

describe('the contract net', { timeout: 300_000 }, () => {
  let s: CliServer;
  before(async () => {
    s = await startCliServer();
  });
  after(() => s.stop());

  it('scripts/contract-net.ts runs it and prints the conversation and the outcome: the lowest bid wins', async () => {
    const { stdout } = await run(process.execPath, [...SCRIPT, '--server', s.grpc, '--task', 'paint-fence', '--bids', '40,25,busy'], { timeout: 120_000 });
    const lines = stdout.split('\n');
    assert.match(lines[0] ?? '', /^deployed manager \(\w+\), contractor-a \(\w+\), contractor-b \(\w+\), contractor-c \(\w+\)$/);
    assert.equal(lines[1], 'bids: contractor-a 40, contractor-b 25, contractor-c refuses');
    const flow = lines.filter((l) => l.includes(' -> ')).map((l) => l.replace(/\s+/g, ' ').trim());
    const expected = [
      'client -> manager request',
      'manager -> contractor-a cfp paint-fence',
      'manager -> contractor-b cfp paint-fence',
      'manager -> contractor-c cfp paint-fence',
      'contractor-a -> manager propose 40',
      'contractor-b -> manager propose 25',
      'contractor-c -> manager refuse busy',
      'manager -> contractor-a reject-proposal paint-fence',
      'manager -> contractor-b accept-proposal paint-fence',
      'contractor-b -> manager inform done: paint-fence',
      'manager -> client inform paint-fence awarded to',
    ];
    assert.equal(flow.length, expected.length, stdout);
    // The three answers to the cfp come in whatever order the contractors ran; the rest is ordered.
    assert.ok(flow[0]?.startsWith(expected[0] ?? ''), flow[0]);
    assert.deepEqual(flow.slice(1, 4), expected.slice(1, 4));
    assert.deepEqual(flow.slice(4, 7).sort(), expected.slice(4, 7).sort());
    assert.deepEqual(flow.slice(7, 10).sort(), expected.slice(7, 10).sort());
    assert.ok(flow[10]?.startsWith(expected[10] ?? ''), flow[10]);
    assert.equal(lines.at(-2), 'outcome: paint-fence awarded to contractor-b at 25');
    const left = await s.client.list();
    assert.deepEqual(left.agents.filter((a) => a.name.startsWith('cnet-')), [], 'the script undeploys its agents');
  });

  it('nobody bids: the manager reports a failure and the run says there is no contract', async () => {
    let printed = '';
    const outcome = await runContractNet(s.client, { task: 'move-piano', bids: ['busy', 'busy'], keep: false, out: (text) => (printed += text), clock: createRealClock() });
    assert.deepEqual(outcome, { awarded: false, report: 'no proposals for move-piano' });
    assert.match(printed, /\noutcome: no contract: no proposals for move-piano\n$/);
  });

  it("a contractor that does not exist: the platform's failure counts as its answer, and the others still negotiate", async () => {
    const manager = (await s.client.deploy({ name: 'cnet-lone-manager', wasm_module: readFileSync(built.get('contract-manager') ?? '') })).agent_id;
    const contractor = (await s.client.deploy({ name: 'cnet-lone-contractor', wasm_module: readFileSync(built.get('contractor') ?? '') })).agent_id;
    const seen: ProtoMessage[] = [];
    const call = s.client.subscribe({ agent_id: manager });
    try {
      const reported = new Promise<ProtoMessage>((resolve) => {
        call.on('data', (message: ProtoMessage) => {
          seen.push(message);
          if (message.sender === manager && message.receiver.startsWith('client:')) resolve(message);
        });
      });
      call.on('error', () => undefined);
      await new Promise((resolve) => call.once('metadata', resolve));
      await s.client.send({ receiver: contractor, message_type: 'inform', content: 'price:7' });
      await s.client.send({ receiver: manager, message_type: 'request', content: `fix-roof ${contractor} 01NOSUCHAGENT0000000000000` });
      const report = await reported;
      assert.equal(report.message_type, 'inform');
      assert.equal(report.content, `fix-roof awarded to ${contractor} at 7: done: fix-roof`);
      assert.ok(seen.some((m) => m.sender === 'platform' && m.message_type === 'failure'), 'the cfp to nobody failed');
      assert.equal(new Set(seen.filter((m) => m.sender === manager).map((m) => m.conversation_id)).size, 1, 'one conversation');
    } finally {
      call.cancel();
      await Promise.all([s.client.undeploy(manager), s.client.undeploy(contractor)]);
    }
  });
});
