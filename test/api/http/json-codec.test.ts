import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadManagementProto } from '../../../src/api/proto.js';
import { decodeBase64, decodeMessage, decodeText, encodeMessage, withDefaults } from '../../../src/api/http/json-codec.js';
import { SvcError } from '../../../src/errors/svc-error.js';
import { inlineRoot } from './inline-proto.js';

const proto = loadManagementProto();
const Deploy = proto.messageType('DeployAgentRequest');
const Message = proto.messageType('Message');
const Scalars = inlineRoot(`enum Color { RED = 0; BLUE = 1; }
message Scalars { int32 i32 = 1; uint32 u32 = 2; int64 i64 = 3; uint64 u64 = 4; double d = 5; bool b = 6; bytes raw = 7; Color color = 8;
  repeated int32 list = 9; map<int32, string> by_number = 10; oneof choice { string left = 11; string right = 12; } }`).lookupType('t.Scalars');

/** Asserts an INVALID_ARGUMENT naming `field` with `reason`. */
function refuses(fn: () => unknown, field: string, reason: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof SvcError, String(err));
    assert.equal(err.code, 'INVALID_ARGUMENT');
    assert.deepEqual({ field: err.metadata.field, reason: err.metadata.reason }, { field, reason });
    assert.ok(err.message.includes(field), `message names ${field}: ${err.message}`);
    return true;
  });
}

test('snake_case and lowerCamelCase names read the same; the result is snake_case with only what was given', () => {
  const camel = decodeMessage(Deploy, { name: 'a', wasmModule: 'AAEC', resources: { memoryLimit: 65536 } });
  const snake = decodeMessage(Deploy, { name: 'a', wasm_module: 'AAEC', resources: { memory_limit: 65536 } });
  assert.deepEqual(camel, snake);
  assert.deepEqual(Object.keys(snake), ['name', 'wasm_module', 'resources']);
  assert.deepEqual([...(snake.wasm_module as Uint8Array)], [0, 1, 2]);
});

test('null is "not set"', () => {
  assert.deepEqual(decodeMessage(Deploy, { name: null, capabilities: null, resources: null }), {});
});

test('unknown, repeated and conflicting fields are refused by name, nested ones by path', () => {
  refuses(() => decodeMessage(Deploy, { name: 'a', colour: 'red' }), 'colour', 'unknown_field');
  refuses(() => decodeMessage(Deploy, { resources: { memoryLimit: 1, cpu: 2 } }), 'resources.cpu', 'unknown_field');
  refuses(() => decodeMessage(Deploy, { __proto__: 1, constructor: 2 } as never), 'constructor', 'unknown_field');
  refuses(() => decodeMessage(Deploy, JSON.parse('{"__proto__": {"x": 1}}')), '__proto__', 'unknown_field');
  refuses(() => decodeMessage(Deploy, { wasm_module: '', wasmModule: '' }), 'wasmModule', 'duplicate_field');
  refuses(() => decodeMessage(Scalars, { left: 'a', right: 'b' }), 'right', 'oneof_conflict');
});

test('wrong types name the field and what was expected', () => {
  const cases: Array<[unknown, string]> = [
    [{ name: 5 }, 'name'],
    [{ capabilities: 'x' }, 'capabilities'],
    [{ capabilities: ['a', 3] }, 'capabilities[1]'],
    [{ capabilities: [null] }, 'capabilities[0]'],
    [{ resources: [] }, 'resources'],
    [{ resources: { memory_limit: 'lots' } }, 'resources.memory_limit'],
    [{ resources: { cpu_shares: 1.5 } }, 'resources.cpu_shares'],
    [{ resources: { cpu_shares: true } }, 'resources.cpu_shares'],
    [{ wasm_module: 12 }, 'wasm_module'],
  ];
  for (const [input, field] of cases) refuses(() => decodeMessage(Deploy, input), field, 'wrong_type');
  refuses(() => decodeMessage(Deploy, [1]), 'body', 'wrong_type');
  refuses(() => decodeMessage(Deploy, 'x'), 'body', 'wrong_type');
  refuses(() => decodeMessage(Message, { metadata: { traceparent: 1 } }), 'metadata.traceparent', 'wrong_type');
  refuses(() => decodeMessage(Message, { metadata: ['x'] }), 'metadata', 'wrong_type');
  // The proto carries content as text: a JSON payload is sent as its JSON text.
  refuses(() => decodeMessage(Message, { content: { task: 1 } }), 'content', 'wrong_type');
  refuses(() => decodeMessage(Scalars, { b: 'true' }), 'b', 'wrong_type');
  refuses(() => decodeMessage(Scalars, { color: 'GREEN' }), 'color', 'wrong_type');
  refuses(() => decodeMessage(Scalars, { by_number: { x: 'a' } }), 'by_number.x', 'wrong_type');
  refuses(() => decodeMessage(Scalars, { d: 'fast' }), 'd', 'wrong_type');
});

test('integers: numbers or decimal strings, in the range of their kind (64-bit ones within 2^53)', () => {
  assert.deepEqual(decodeMessage(Scalars, { i32: -5, u32: '4294967295', i64: '-9007199254740991', u64: 9007199254740991 }), {
    i32: -5, u32: 4294967295, i64: -9007199254740991, u64: 9007199254740991,
  });
  refuses(() => decodeMessage(Scalars, { u32: -1 }), 'u32', 'out_of_range');
  refuses(() => decodeMessage(Scalars, { u32: 4294967296 }), 'u32', 'out_of_range');
  refuses(() => decodeMessage(Scalars, { i32: 2 ** 31 }), 'i32', 'out_of_range');
  refuses(() => decodeMessage(Scalars, { u64: '9007199254740993' }), 'u64', 'out_of_range');
  refuses(() => decodeMessage(Scalars, { u64: '1e3' }), 'u64', 'wrong_type');
  refuses(() => decodeMessage(Scalars, { u64: '' }), 'u64', 'wrong_type');
});

test('floats, enums, oneof members and integer map keys', () => {
  assert.deepEqual(decodeMessage(Scalars, { d: 'Infinity', color: 1, left: 'x', by_number: { '7': 'seven' } }), { d: Infinity, color: 'BLUE', left: 'x', by_number: { '7': 'seven' } });
  assert.deepEqual(decodeMessage(Scalars, { d: '2.5', color: 'BLUE' }), { d: 2.5, color: 'BLUE' });
});

test('base64: standard or URL-safe, padded or not; anything else is refused, naming the field', () => {
  const bytes = (text: string) => [...decodeBase64('f', text)];
  assert.deepEqual(bytes('+/8='), [251, 255]);
  assert.deepEqual(bytes('-_8'), [251, 255]);
  assert.deepEqual(bytes(''), []);
  assert.deepEqual(bytes('AAECAw=='), [0, 1, 2, 3]);
  for (const bad of ['A', 'AAE=C', 'AA=', 'AAAA=', 'AA===', 'AA AA', 'AA\nAA', '!!!!', 'AAE*']) refuses(() => decodeBase64('wasm_module', bad), 'wasm_module', 'invalid_base64');
  refuses(() => decodeMessage(Deploy, { wasmModule: 'not base64!' }), 'wasmModule', 'invalid_base64');
});

test('decodeText: repeated values from commas and repetitions; an empty string is not set', () => {
  const types = proto.messageType('MessageFilter').fields.message_types!;
  assert.deepEqual(decodeText(types, ['inform,request', 'cfp'], 'message_types'), ['inform', 'request', 'cfp']);
  assert.equal(decodeText(types, [''], 'message_types'), undefined);
  const size = proto.messageType('ListAgentsRequest').fields.page_size!;
  assert.equal(decodeText(size, ['25'], 'page_size'), 25);
  assert.equal(decodeText(size, [''], 'page_size'), undefined);
  refuses(() => decodeText(size, ['ten'], 'page_size'), 'page_size', 'wrong_type');
  refuses(() => decodeText(size, ['1', '2'], 'page_size'), 'page_size', 'duplicate_field');
  assert.equal(decodeText(Scalars.fields.b!, ['false'], 'b'), false);
  assert.equal(decodeText(Scalars.fields.color!, ['1'], 'color'), 'BLUE');
  refuses(() => decodeText(Deploy.fields.resources!, ['x'], 'resources'), 'resources', 'wrong_type');
});

test('encode: descriptor fields only, unset ones omitted, bytes as base64, non-text content as its JSON text', () => {
  const message = { message_id: 'm', sender: 's', receiver: 'r', message_type: 'inform', content: { a: [1] }, metadata: { k: 'v' }, created_at: 't', internal: 'secret', language: undefined };
  assert.deepEqual(encodeMessage(Message, message), { message_id: 'm', sender: 's', receiver: 'r', message_type: 'inform', content: '{"a":[1]}', metadata: { k: 'v' }, created_at: 't' });
  assert.deepEqual(encodeMessage(Message, { content: 'plain' }), { content: 'plain' });
  assert.deepEqual(encodeMessage(Scalars, { raw: new Uint8Array([251, 255]), u64: 2n ** 60n, i64: 5n, color: 1 }), { u64: '1152921504606846976', i64: 5, raw: '+/8=', color: 'BLUE' });
  assert.deepEqual(encodeMessage(proto.messageType('UndeployAgentResponse'), undefined), {});
});

test('withDefaults fills every unset field with its proto3 default, nested messages included', () => {
  const filled = withDefaults(Deploy, { name: 'a' });
  assert.deepEqual({ ...filled, wasm_module: [...(filled.wasm_module as Uint8Array)] }, { name: 'a', wasm_module: [], capabilities: [], resources: { memory_limit: 0, cpu_shares: 0 } });
  assert.deepEqual(withDefaults(Deploy, { resources: { cpu_shares: 5 } }).resources, { memory_limit: 0, cpu_shares: 5 });
  const Self = inlineRoot('message Self { Self next = 1; string leaf = 2; }').lookupType('t.Self');
  assert.deepEqual(withDefaults(Self, {}), { leaf: '' });
});

test('a huge unknown name is cut short in the error', () => {
  assert.throws(() => decodeMessage(Deploy, { ['k'.repeat(100_000)]: 1 }), (err: unknown) => err instanceof SvcError && err.message.length < 200 && (err.metadata.field ?? '').length <= 129);
});
