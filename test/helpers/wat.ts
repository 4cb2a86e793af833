import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import wabtInit from 'wabt';

type Wabt = Awaited<ReturnType<typeof wabtInit>>;
export type WatFeatures = Parameters<Wabt['parseWat']>[2];

let wabtPromise: Promise<Wabt> | undefined;

function wabt(): Promise<Wabt> {
  wabtPromise ??= wabtInit();
  return wabtPromise;
}

/**
 * Compiles WAT text to a binary module. `features` enables post-MVP proposals
 * so hostile fixtures (SIMD, threads, ...) can be written at all.
 */
export async function wat(source: string, features: WatFeatures = {}, name = 'fixture.wat'): Promise<Uint8Array<ArrayBuffer>> {
  const w = await wabt();
  const parsed = w.parseWat(name, source, { multi_value: true, mutable_globals: true, sign_extension: true, sat_float_to_int: true, ...features });
  try {
    parsed.resolveNames();
    parsed.validate();
    return new Uint8Array(parsed.toBinary({}).buffer);
  } finally {
    parsed.destroy();
  }
}

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));

/** Compiles `test/fixtures/<file>`. */
export async function watFixture(file: string, features: WatFeatures = {}): Promise<Uint8Array<ArrayBuffer>> {
  return wat(readFileSync(FIXTURES + file, 'utf8'), features, file);
}
