/**
 * The light spans' id blocks (`SpanIdBlocks`): every id is 8 bytes that are
 * not all zeros, ids do not repeat across blocks and across refills of the
 * random pool behind them, and a block handed out is never rewritten and
 * holds only its own 4 KiB (a span keeps its block alive, so a block that
 * were a view of the pool would keep the whole pool alive).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hex8, SpanIdBlocks } from '../../src/telemetry/trace-ids.js';

const BLOCK_BYTES = 4096;
/** Blocks drawn: more than two refills of the 16-block pool. */
const BLOCKS = 40;

test('span id blocks: distinct non-zero ids across blocks and pool refills; blocks are copies that stay as handed out', () => {
  const ids = new SpanIdBlocks();
  const seen = new Set<string>();
  const blocks: { block: Uint8Array; copy: Uint8Array }[] = [];
  let drawn = 0;
  while (blocks.length < BLOCKS) {
    ids.next();
    drawn += 1;
    const { block, at } = ids;
    if (blocks.length === 0 || blocks[blocks.length - 1]!.block !== block) {
      assert.equal(at, 0, 'a new block starts at its first id');
      assert.equal(block.byteLength, BLOCK_BYTES);
      assert.equal(block.buffer.byteLength, BLOCK_BYTES, 'a block owns its bytes rather than viewing a larger pool');
      blocks.push({ block, copy: block.slice() });
    }
    const id = hex8(block, at);
    assert.notEqual(id, '0000000000000000');
    assert.equal(seen.has(id), false, `id ${id} repeated after ${drawn} ids`);
    seen.add(id);
  }
  // Every id of a block is used before the next block: the loop stopped at the first id of block BLOCKS.
  assert.equal(drawn, (BLOCKS - 1) * (BLOCK_BYTES / 8) + 1, 'each block yields its 512 ids, in turn');
  for (const [i, { block, copy }] of blocks.entries()) assert.deepEqual(block, copy, `block ${i} was rewritten after it was handed out`);
});
