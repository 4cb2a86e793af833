import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MemberState } from '../../src/cluster/member.js';
import { quorumOf } from '../../src/cluster/quorum.js';

const table = (...states: MemberState[]) => states.map((state) => ({ state }));

describe('the majority rule over a member table', () => {
  const cases: Array<[string, MemberState[], { seen: number; known: number; verdict: string }]> = [
    ['a node alone is its own majority', ['alive'], { seen: 1, known: 1, verdict: 'majority' }],
    ['three alive', ['alive', 'alive', 'alive'], { seen: 3, known: 3, verdict: 'majority' }],
    ['two of three after a crash fail over', ['alive', 'alive', 'dead'], { seen: 2, known: 3, verdict: 'majority' }],
    ['one of three is a minority', ['alive', 'dead', 'dead'], { seen: 1, known: 3, verdict: 'minority' }],
    ['a suspect member is not seen', ['alive', 'suspect', 'dead'], { seen: 1, known: 3, verdict: 'minority' }],
    ['a minority that declared one of three suspects dead still sees a minority', ['alive', 'alive', 'suspect', 'suspect', 'dead'], { seen: 2, known: 5, verdict: 'minority' }],
    ['exactly half keeps its agents and fails over nothing', ['alive', 'dead'], { seen: 1, known: 2, verdict: 'half' }],
    ['two of four is half', ['alive', 'alive', 'dead', 'dead'], { seen: 2, known: 4, verdict: 'half' }],
    ['three of five is a majority', ['alive', 'alive', 'alive', 'dead', 'dead'], { seen: 3, known: 5, verdict: 'majority' }],
    ['two of five is a minority', ['alive', 'alive', 'dead', 'dead', 'dead'], { seen: 2, known: 5, verdict: 'minority' }],
    ['members that left do not count', ['alive', 'left', 'left', 'dead'], { seen: 1, known: 2, verdict: 'half' }],
    ['after two graceful leaves, one survivor of three is a majority', ['alive', 'left', 'left'], { seen: 1, known: 1, verdict: 'majority' }],
    ['a left member does not turn a minority into half', ['alive', 'dead', 'dead', 'left'], { seen: 1, known: 3, verdict: 'minority' }],
  ];
  for (const [name, states, expected] of cases) it(name, () => assert.deepEqual(quorumOf(table(...states)), expected));
});
