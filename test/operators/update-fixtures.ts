/**
 * Modules and helpers of the UpdateAgent tests: versions of the crashable
 * counter (test/agents/agent-wat.ts) that keep or break its layout, and
 * calls against a real server (test/cli/cli-server.ts).
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { CRASHABLE_COUNTER, compile } from '../agents/agent-wat.js';
import type { CliServer } from '../cli/cli-server.js';

export const WAIT_MS = 20_000;
const STEP = '(global.set $count (i32.add (global.get $count) (i32.const 1)))';
assert.ok(CRASHABLE_COUNTER.includes(STEP));
const ONE_PAGE = '(memory (export "memory") 1 1)';

/** Version 1: counts by 1; `!` in a message traps. */
export const V1 = await compile(CRASHABLE_COUNTER);
/** Version 2, the same layout: counts by 10. */
export const V2 = await compile(CRASHABLE_COUNTER.replace(STEP, STEP.replace('(i32.const 1)', '(i32.const 10)')));
/** The same layout, but every message traps: a bad release. */
export const V2_TRAPS = await compile(CRASHABLE_COUNTER.replace(STEP, `unreachable ${STEP}`));
/** Its count is an i64: the state cannot move. */
export const V2_I64 = await compile(`(module
  (memory (export "memory") 1 1)
  (global $count (mut i64) (i64.const 0))
  (func (export "handle") (global.set $count (i64.add (global.get $count) (i64.const 1)))))`);
/** Same layout; `_upgrade` traps. */
export const V2_UPGRADE_TRAPS = await compile(CRASHABLE_COUNTER.replace(ONE_PAGE, `${ONE_PAGE} (func (export "_upgrade") unreachable)`));
/** Same layout; `_upgrade` migrates the count (times 100) after the restore. */
export const V2_MIGRATES = await compile(
  CRASHABLE_COUNTER.replace(ONE_PAGE, `${ONE_PAGE} (func (export "_upgrade") (global.set $count (i32.mul (global.get $count) (i32.const 100))))`),
);
/** Version 1 with two pages of memory, for a version 2 of one page that cannot hold its state. */
export const V1_TWO_PAGES = await compile(CRASHABLE_COUNTER.replace(ONE_PAGE, '(memory (export "memory") 2 2)'));

/** The AssemblyScript pair of examples/agents: counter (steps of 1) and counter-v2 (steps of 2). */
export async function assemblyScriptCounters(): Promise<{ v1: Uint8Array; v2: Uint8Array }> {
  const read = async (name: string) => new Uint8Array(await readFile(new URL(`../../examples/build/${name}.wasm`, import.meta.url)));
  return { v1: await read('counter'), v2: await read('counter-v2') };
}

export interface HttpAnswer {
  status: number;
  body: Record<string, unknown>;
}

export async function request(s: CliServer, method: string, path: string, body?: unknown): Promise<HttpAnswer> {
  const init: RequestInit = body === undefined ? { method } : { method, body: JSON.stringify(body), headers: { 'content-type': 'application/json' } };
  const answer = await fetch(`http://${s.http}${path}`, init);
  return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
}

/** PATCH /api/v1/agents/{id} with the module as base64. */
export function patch(s: CliServer, id: string, fields: Record<string, unknown>, module?: Uint8Array): Promise<HttpAnswer> {
  const body = module === undefined ? fields : { ...fields, wasm_module: Buffer.from(module).toString('base64') };
  return request(s, 'PATCH', `/api/v1/agents/${id}`, body);
}

/** Sends `content` and reads the reply from the agent's history. */
export async function ask(s: CliServer, id: string, content: string): Promise<string> {
  const { message_id } = await s.client.send({ receiver: id, message_type: 'request', content });
  const limit = Date.now() + WAIT_MS;
  for (;;) {
    const { body } = await request(s, 'GET', `/api/v1/agents/${id}/messages`);
    const reply = (body.messages as Array<{ in_reply_to: string; content: string }>).find((m) => m.in_reply_to === message_id);
    if (reply !== undefined) return reply.content;
    assert.ok(Date.now() < limit, `no reply to ${content}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Waits until GetAgent satisfies `done`. */
export async function agentWhere(s: CliServer, id: string, done: (agent: Record<string, unknown>) => boolean, what: string): Promise<Record<string, unknown>> {
  const limit = Date.now() + WAIT_MS;
  for (;;) {
    const { body } = await request(s, 'GET', `/api/v1/agents/${id}`);
    if (done(body)) return body;
    assert.ok(Date.now() < limit, `agent ${id} never ${what}: ${JSON.stringify(body)}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** A sample of the metrics listener's Prometheus text. */
export async function metric(s: CliServer, line: RegExp): Promise<number> {
  const text = await (await fetch(`http://${s.metrics}/metrics`)).text();
  const found = text.split('\n').find((l) => line.test(l));
  return found === undefined ? 0 : Number(found.split(' ').at(-1));
}
