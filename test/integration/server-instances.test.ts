/**
 * Two servers in one process share no state (issue 40): each mints its agent
 * and message ids with a generator of its own, and its agents, bus and
 * history are its own.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createIdGenerator } from '../../src/bus/message-id.js';
import { CLIENT, TEST_TIMEOUT_MS, ask, ctx, deploy, example, messages, startTestServer } from '../agents/agent-fixtures.js';

/** A ULID's 16 random characters. */
const randomPart = (id: string): string => id.slice(10);

describe('two servers in one process', { timeout: TEST_TIMEOUT_MS }, () => {
  it('mint ids from their own generators and see only their own agents and messages', async () => {
    // Random parts all zeros on one server and all ones (Z) on the other: an id tells which generator made it.
    const a = await startTestServer({ newId: createIdGenerator({ random: (bytes) => bytes.fill(0) }) });
    const b = await startTestServer({ newId: createIdGenerator({ random: (bytes) => bytes.fill(31) }) });
    try {
      const eventsA = a.events();
      const eventsB = b.events();
      // Interleaved, so a shared generator would hand its next id from one server's state to the other.
      const agentA = await deploy(a, example('echo'), 'echo');
      const agentB = await deploy(b, example('echo'), 'echo');
      const replyA = await ask(a, eventsA, agentA, 'to a');
      const replyB = await ask(b, eventsB, agentB, 'to b');
      assert.equal(replyA.receiver, CLIENT);
      assert.equal(replyB.receiver, CLIENT);

      const idsA = [agentA, ...messages(eventsA).flatMap((m) => [m.message_id, m.conversation_id])];
      const idsB = [agentB, ...messages(eventsB).flatMap((m) => [m.message_id, m.conversation_id])];
      // Server a's generator increments from zeros: its ids stay near zero, and strictly increase in the order minted.
      for (const id of idsA) assert.match(randomPart(id), /^0{14}/, `${id} was minted by server a`);
      // Server b's is all ones: every id overflows to a fresh draw of all ones.
      for (const id of idsB) assert.equal(randomPart(id), 'Z'.repeat(16), `${id} was minted by server b`);

      assert.deepEqual((await a.service.list({}, ctx)).agents.map((x) => x.agent_id), [agentA]);
      assert.deepEqual((await b.service.list({}, ctx)).agents.map((x) => x.agent_id), [agentB]);
      assert.ok(messages(eventsA).every((m) => m.receiver !== agentB && m.sender !== agentB));
    } finally {
      await b.stop();
      await a.stop();
    }
  });
});
