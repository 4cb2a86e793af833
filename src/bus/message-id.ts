/**
 * Message and conversation ids: ULIDs (https://github.com/ulid/spec), 26
 * Crockford base32 characters, 48 bits of milliseconds then 80 random bits.
 * They sort by creation time as plain strings, which lets history and logs be
 * ordered without parsing, and they need no coordination between nodes.
 */
import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const ALPHABET_CODES = Array.from(ALPHABET, (c) => c.charCodeAt(0));
const TIME_CHARS = 10;
const RANDOM_CHARS = 16;
/** 2^48 ms, the largest time a ULID encodes (year 10889). */
const MAX_TIME = 281_474_976_710_655;
/** Random bytes drawn per refill: one `randomFillSync` call serves 256 ids instead of one each. */
const POOL_BYTES = RANDOM_CHARS * 256;

export interface IdGeneratorOptions {
  /** Milliseconds since the epoch; injected so tests fix the time part. */
  now?: () => number;
  /** Fills a buffer with random bytes; injected so tests fix the random part. */
  random?: (bytes: Uint8Array) => void;
}

export type IdGenerator = () => string;

/**
 * Returns a generator of monotonic ULIDs: within one millisecond (or if the
 * clock steps back) the random part of the previous id is incremented instead
 * of drawn again, so ids from one generator are strictly increasing.
 */
export function createIdGenerator(options: IdGeneratorOptions = {}): IdGenerator {
  const now = options.now ?? Date.now;
  const random = options.random ?? ((bytes: Uint8Array) => void randomFillSync(bytes));
  const pool = new Uint8Array(POOL_BYTES);
  let poolOffset = POOL_BYTES;
  // Digits (0..31) of the last random part, kept for the monotonic increment.
  const digits = new Uint8Array(RANDOM_CHARS);
  // Character codes of the last id. The id is made from them in one call: a flat string, where
  // appending 26 characters made a rope that every later reader (JSON, Map keys) had to flatten.
  const codes: number[] = new Array<number>(TIME_CHARS + RANDOM_CHARS).fill(ALPHABET_CODES[0]!);
  let lastTime = -1;

  function setDigit(i: number, d: number): void {
    digits[i] = d;
    codes[TIME_CHARS + i] = ALPHABET_CODES[d]!;
  }

  function drawRandom(): void {
    if (poolOffset === POOL_BYTES) {
      random(pool);
      poolOffset = 0;
    }
    for (let i = 0; i < RANDOM_CHARS; i++) setDigit(i, (pool[poolOffset + i] ?? 0) & 31);
    poolOffset += RANDOM_CHARS;
  }

  /** Adds one to the random part; false when it was all ones (2^80 ids in one millisecond). */
  function increment(): boolean {
    for (let i = RANDOM_CHARS - 1; i >= 0; i--) {
      const d = digits[i] ?? 0;
      if (d < 31) {
        setDigit(i, d + 1);
        return true;
      }
      setDigit(i, 0);
    }
    return false;
  }

  function encodeTime(time: number): void {
    let rest = time;
    for (let i = TIME_CHARS - 1; i >= 0; i--) {
      codes[i] = ALPHABET_CODES[rest % 32]!;
      rest = Math.floor(rest / 32);
    }
  }

  return () => {
    const time = Math.min(Math.max(Math.floor(now()), 0), MAX_TIME);
    if (time > lastTime) {
      lastTime = time;
      encodeTime(time);
      drawRandom();
    } else if (!increment()) {
      // Overflow of the random part: borrow the next millisecond so order still holds.
      lastTime = Math.min(lastTime + 1, MAX_TIME);
      encodeTime(lastTime);
      drawRandom();
    }
    return String.fromCharCode(...codes);
  };
}

/** The milliseconds encoded in a ULID, or undefined when `id` is not one. */
export function idTime(id: string): number | undefined {
  if (id.length !== TIME_CHARS + RANDOM_CHARS) return undefined;
  let time = 0;
  for (let i = 0; i < id.length; i++) {
    const d = ALPHABET.indexOf(id[i] ?? '');
    if (d < 0) return undefined;
    if (i < TIME_CHARS) time = time * 32 + d;
  }
  return time <= MAX_TIME ? time : undefined;
}
