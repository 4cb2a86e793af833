import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isSvcError } from '../../src/errors/svc-error.js';
import { checkAgentMemory } from '../../src/sandbox/agent-memory.js';

const PAGE = 65_536;

/** The metadata of a refusal for an agent whose memory_limit is `bytes`. */
const refused = (bytes: number, pages: number, module: { initial: number } | { maximum: number }) => ({
  reason: 'agent_memory_limit',
  limit: String(pages),
  memory_limit: String(bytes),
  ...Object.fromEntries(Object.entries(module).map(([key, value]) => [key, String(value)])),
});

/** [what, initial pages, maximum pages, memory_limit bytes, lower_memory_maximum false, true]: null accepts, metadata refuses. */
type Case = [string, number, number, number, Record<string, string> | null, Record<string, string> | null];

const CASES: Case[] = [
  ['maximum equal to the limit', 1, 16, 16 * PAGE, null, null],
  ['maximum below the limit', 1, 2, 16 * PAGE, null, null],
  ['initial and maximum equal to the limit', 4, 4, 4 * PAGE, null, null],
  ['maximum over the limit (echo at 1 page)', 1, 16, PAGE, refused(PAGE, 1, { maximum: 16 }), null],
  ['maximum one page over', 1, 9, 8 * PAGE, refused(8 * PAGE, 8, { maximum: 9 }), null],
  ['a limit short of whole pages counts the whole ones', 1, 2, 2 * PAGE - 1, refused(2 * PAGE - 1, 1, { maximum: 2 }), null],
  ['a limit past whole pages keeps them', 1, 2, 2 * PAGE + 100, null, null],
  ['initial over the limit, which cannot be lowered', 4, 8, 2 * PAGE, refused(2 * PAGE, 2, { initial: 4 }), refused(2 * PAGE, 2, { initial: 4 })],
  ['one page under a limit below one page', 1, 1, 1_000, refused(1_000, 0, { initial: 1 }), refused(1_000, 0, { initial: 1 })],
  ['no memory under a limit below one page', 0, 0, 1_000, null, null],
  ['a maximum under a limit below one page', 0, 1, 1_000, refused(1_000, 0, { maximum: 1 }), null],
  ['a maximum of max_memory_pages (what admission lowers a missing one to), the limit at it', 1, 1024, 1024 * PAGE, null, null],
  ['a maximum of max_memory_pages, the limit below it', 1, 1024, 64 * PAGE, refused(64 * PAGE, 64, { maximum: 1024 }), null],
];

function outcome(initial: number, maximum: number, limit: number, lower: boolean): Record<string, string> | null {
  try {
    checkAgentMemory({ initialPages: initial, maximumPages: maximum, lowered: false }, limit, lower);
    return null;
  } catch (error) {
    assert.ok(isSvcError(error) && error.code === 'INVALID_MODULE', String(error));
    return error.metadata;
  }
}

describe('checkAgentMemory: the module memory against the agent memory_limit', () => {
  for (const [what, initial, maximum, limit, strict, lowering] of CASES) {
    for (const [lower, expected] of [[false, strict], [true, lowering]] as const) {
      it(`${what}, lower_memory_maximum ${lower}: ${expected === null ? 'accepted' : 'INVALID_MODULE'}`, () => {
        assert.deepEqual(outcome(initial, maximum, limit, lower), expected);
      });
    }
  }

  it('names both numbers in its message', () => {
    assert.throws(() => checkAgentMemory({ initialPages: 1, maximumPages: 16, lowered: false }, PAGE, false), {
      message: "memory maximum 16 pages exceeds the agent's memory_limit of 1 pages (65536 bytes)",
    });
  });
});
