import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Agent } from '../../src/agents/agent-service-types.js';
import { agentDetails, agentsTable, agentsWideTable, errorLine, healthLine, isOutputFormat, messageLine, table } from '../../src/cli/output.js';

const AGENT: Agent = {
  agent_id: 'agt_1',
  name: 'echo',
  capabilities: ['echo', 'ping'],
  resources: { memory_limit: 0, cpu_shares: 0 },
  state: 'running',
  node_id: 'node-a',
  module_sha256: 'ab'.repeat(32),
  module_size: 12_345,
  restart_count: 1,
  messages_received: 10,
  messages_sent: 9,
  memory_bytes: 65_536,
  throttled_seconds: 2.5,
  created_at: '2026-01-02T03:04:05.000Z',
  updated_at: '2026-01-02T03:04:06.000Z',
};

describe('table', () => {
  it('aligns columns and leaves no trailing spaces', () => {
    assert.equal(table([['A', 'BB'], ['ccc', 'd']]), 'A    BB\nccc  d\n');
    assert.equal(table([['key', ''], ['k', 'v']]), 'key\nk    v\n');
  });
});

describe('agents', () => {
  it('lists one line per agent under a header', () => {
    const lines = agentsTable([AGENT, { ...AGENT, agent_id: 'agt_22', name: 'counter', state: 'hibernated' }]).trimEnd().split('\n');
    assert.equal(lines.length, 3);
    assert.match(lines[0] ?? '', /^AGENT_ID\s+NAME\s+STATE\s+RESTARTS\s+RECEIVED\s+SENT\s+MEMORY\s+CREATED$/);
    assert.match(lines[1] ?? '', /^agt_1\s+echo\s+running\s+1\s+10\s+9\s+64KiB\s+2026-01-02T03:04:05.000Z$/);
    assert.match(lines[2] ?? '', /^agt_22\s+counter\s+hibernated/);
  });

  it('wide adds the time an agent was held back by its CPU quota', () => {
    const [header, row] = agentsWideTable([AGENT]).trimEnd().split('\n');
    assert.match(header ?? '', /\sCAPABILITIES\s+THROTTLED\s+CREATED$/);
    assert.match(row ?? '', /\secho,ping\s+2\.5s\s+2026-01-02T03:04:05\.000Z$/);
    assert.match(agentDetails(AGENT), /^throttled_seconds\s+2\.500$/m);
  });

  it('prints only the header for no agents', () => {
    assert.equal(agentsTable([]).trimEnd().split('\n').length, 1);
  });

  it('details one agent, naming the defaults', () => {
    const text = agentDetails(AGENT);
    assert.match(text, /^agent_id\s+agt_1$/m);
    assert.match(text, /^capabilities\s+echo, ping$/m);
    assert.match(text, /^memory_limit\s+server maximum$/m);
    assert.match(text, /^cpu_shares\s+default$/m);
  });
});

describe('messages and health', () => {
  it('prints a message on one line whatever its content holds', () => {
    const line = messageLine({
      message_id: 'm', sender: 'client:anonymous', receiver: 'agt_1', message_type: 'inform', content: 'two\nlines', conversation_id: 'c',
      reply_with: '', in_reply_to: '', language: '', ontology: '', protocol: '', metadata: {}, created_at: '2026-01-02T03:04:05.000Z',
    });
    assert.equal(line, '2026-01-02T03:04:05.000Z  client:anonymous -> agt_1  inform  "two\\nlines"\n');
  });

  it('prints health on one line', () => {
    assert.equal(healthLine({ status: 'healthy', version: '0.1.0', agents: { running: 2, capacity: 10 }, trace_id: 't' }), 'healthy  version 0.1.0  agents 2/10  trace t\n');
  });
});

describe('errorLine', () => {
  it('names the code, the message, the metadata and the trace id on one line', () => {
    const line = errorLine({ code: 'INVALID_MODULE', message: 'module imports\nenv.abort', trace_id: 'abc', metadata: { reason: 'forbidden_import', import: 'env.abort', note: 'has space' } });
    assert.equal(line, 'svc: INVALID_MODULE: module imports env.abort reason=forbidden_import import=env.abort note="has space" (trace abc)\n');
  });

  it('leaves out an absent trace id', () => {
    assert.equal(errorLine({ code: 'NOT_FOUND', message: 'no agent', metadata: {} }), 'svc: NOT_FOUND: no agent\n');
  });
});

describe('isOutputFormat', () => {
  it('knows table, wide, json and yaml', () => {
    for (const format of ['table', 'wide', 'json', 'yaml']) assert.ok(isOutputFormat(format), format);
    assert.ok(!isOutputFormat('xml'));
  });
});
