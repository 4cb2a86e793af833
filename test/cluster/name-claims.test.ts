import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createNameClaims } from '../../src/cluster/name-claims.js';

function claims(taken: Record<string, string> = {}) {
  let now = 0;
  const table = createNameClaims({ now: () => now, ttlMs: 10_000, taken: (name) => taken[name] });
  return { table, advance: (ms: number) => (now += ms) };
}

describe('name claims', () => {
  it('two concurrent claims of one name: the lower agent id wins whichever arrives first', () => {
    for (const order of [['01A', '01B'], ['01B', '01A']] as const) {
      const { table } = claims();
      const results = order.map((id) => ({ id, ok: table.claim({ name: 'x', agent_id: id, node_id: id === '01A' ? 'n1' : 'n2' }) }));
      if (order[0] === '01A') assert.deepEqual(results.map((r) => r.ok), [true, false]);
      else assert.deepEqual(results.map((r) => r.ok), [true, true], 'the lower id replaces the higher one');
      assert.equal(table.heldByOther('x', '01A'), false);
      assert.equal(table.heldByOther('x', '01B'), true);
    }
  });

  it('both nodes of a race reach the same verdict: each refuses the higher id', () => {
    const [onN1, onN2] = [claims().table, claims().table];
    const a = { name: 'x', agent_id: '01B', node_id: 'n1' };
    const b = { name: 'x', agent_id: '01A', node_id: 'n2' };
    onN1.claim(a);
    onN2.claim(b);
    assert.equal(onN2.claim(a), false, 'n2 refuses n1\'s higher id');
    assert.equal(onN1.claim(b), true, 'n1 lets n2\'s lower id through');
    assert.equal(onN1.heldByOther('x', a.agent_id), true, 'so n1\'s own deploy fails');
  });

  it('a name the registry lists under another agent is refused; its own agent may claim it again', () => {
    const { table } = claims({ x: '01A' });
    assert.equal(table.claim({ name: 'x', agent_id: '01B', node_id: 'n2' }), false);
    assert.equal(table.claim({ name: 'x', agent_id: '01A', node_id: 'n1' }), true);
  });

  it('a node\'s retry replaces its own claim; a claim expires', () => {
    const { table, advance } = claims();
    assert.equal(table.claim({ name: 'x', agent_id: '01A', node_id: 'n1' }), true);
    assert.equal(table.claim({ name: 'x', agent_id: '01C', node_id: 'n1' }), true);
    assert.equal(table.claim({ name: 'x', agent_id: '01D', node_id: 'n2' }), false);
    advance(10_000);
    assert.equal(table.claim({ name: 'x', agent_id: '01D', node_id: 'n2' }), true);
  });

  it('a failed deploy\'s release frees the name at once; only the claim of that agent from that node is released', () => {
    const { table } = claims();
    assert.equal(table.claim({ name: 'x', agent_id: '01A', node_id: 'n1' }), true);
    table.release('x', '01A', 'n2');
    table.release('x', '01B', 'n1');
    assert.equal(table.claim({ name: 'x', agent_id: '01D', node_id: 'n2' }), false, 'another node or another agent cannot release it');
    table.release('x', '01A', 'n1');
    assert.equal(table.claim({ name: 'x', agent_id: '01D', node_id: 'n2' }), true);
  });
});
