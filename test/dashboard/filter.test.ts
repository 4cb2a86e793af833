/** The agents table's filter (dashboard/lib/filter.js), as a table of queries. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentFilter } from '../../dashboard/lib/filter.js';
import type { Agent } from '../../dashboard/lib/types.js';

const base = { capabilities: [], resources: { memory_limit: 0, cpu_shares: 0 }, module_sha256: '', module_size: 0, restart_count: 0, messages_received: 0, messages_sent: 0, memory_bytes: 0, created_at: '', updated_at: '' };
const AGENTS: Agent[] = [
  { ...base, agent_id: '01AAA', name: 'echo', state: 'running', node_id: 'node-one' },
  { ...base, agent_id: '01BBB', name: 'Crasher', state: 'failed', node_id: 'node-two' },
  { ...base, agent_id: '01CCC', name: 'ping', state: 'hibernated', node_id: 'node-one' },
];

describe('agentFilter', () => {
  const table: Array<[string, string[]]> = [
    ['', ['echo', 'Crasher', 'ping']],
    ['   ', ['echo', 'Crasher', 'ping']],
    ['crash', ['Crasher']],
    ['CRASH', ['Crasher']],
    ['state:failed', ['Crasher']],
    ['state:fail', []],
    ['node:one', ['echo', 'ping']],
    ['node:one state:running', ['echo']],
    ['name:p', ['ping']],
    ['id:bbb', ['Crasher']],
    ['01c', ['ping']],
    ['one', ['echo', 'ping']],
    ['running', ['echo']],
    ['color:red', []],
    ['nothing', []],
  ];
  for (const [query, names] of table) {
    it(`${JSON.stringify(query)} → ${names.join(', ') || 'none'}`, () => {
      assert.deepEqual(AGENTS.filter(agentFilter(query)).map((a) => a.name), names);
    });
  }
});
