/** The size of each semi-space the server asks V8 for, in MiB. */
export const SEMI_SPACE_MIB = 64;
/** V8's own ceiling for a semi-space on 64-bit, in MiB: what a server without the flag gets. */
export const V8_SEMI_SPACE_MIB = 16;
/** Resident memory the flag can add under load, in MiB: both semi-spaces, each past V8's own ceiling. */
export const SEMI_SPACE_EXTRA_MIB = 2 * (SEMI_SPACE_MIB - V8_SEMI_SPACE_MIB);

/**
 * The Node flags the server runs under: `npm start`, the `svc` script and
 * the `svc` executable's `#!` line all pass them, and the benchmarks give
 * them to the servers they start (a test holds the first three to this list).
 * They are V8 heap settings, which take effect only on the command line:
 * V8 sizes its heap when the process starts, and a flag set later by
 * `v8.setFlagsFromString` changes nothing.
 *
 * `--max-semi-space-size=64` (`SEMI_SPACE_MIB`) lets the young generation grow to two 64 MiB
 * semi-spaces (V8's own ceiling on 64-bit is two of 16). A busy server
 * keeps each message for about a tenth of a second (the per-agent history),
 * and at V8's ceiling the young generation is collected about a dozen times a
 * second, so many of those messages are copied twice and promoted, and the
 * old generation grows by megabytes a second. Four times rarer collections
 * let most of them die young: untraced throughput was 1–5% higher
 * (ADR 0001). The price is up to `SEMI_SPACE_EXTRA_MIB` MiB
 * more resident memory under load; V8 grows the young generation only when
 * the allocation rate asks for it, so an idle server stays at its usual size.
 * An operator who wants another size runs
 * `node --max-semi-space-size=N dist/src/cli/main.js start` (the command line
 * wins over `NODE_OPTIONS` for V8 flags).
 */
export const SERVER_NODE_FLAGS: readonly string[] = [`--max-semi-space-size=${SEMI_SPACE_MIB}`];
