/**
 * Rewrites a module that `validateModule` accepted so the host can meter and
 * snapshot it: a fuel counter charged at function entries and loop heads, a
 * memory-growth budget enforced on every `memory.grow` (each becomes a call to
 * one appended helper function, so no body needs an extra local), and exports
 * of the mutable globals. Only appends globals, one type and one function, so
 * no index the original code uses moves, and the original code cannot name the
 * new globals (their indices were out of range when it was validated).
 *
 * A wasm start section becomes the export `__svc_start`, which the worker
 * calls after instantiation like `_initialize`: run inside instantiation, it
 * could neither be given its memory budget nor be told apart from a trap
 * when it ran out of fuel, since the host sees no export of an instance that
 * failed to instantiate.
 *
 * Fuel cost model: every instruction belongs to one charging point, its
 * innermost enclosing `loop` or else the function body. Entering a charging
 * point (function entry, each pass through a loop head) costs the static
 * count of the instructions it owns, including those in untaken branches and
 * the closing `end`, at least 1; a direct call to a folded leaf (see
 * `rewriteCode`) adds the leaf's count. The count overestimates rather than
 * underestimates, and it is deterministic: the same code burns the same fuel.
 * The counter is an i64 global; the check is 10 instructions with no local.
 */
import {
  FUEL_EXPORT,
  GLOBAL_EXPORT_PREFIX,
  MEMORY_BUDGET_EXPORT,
  START_EXPORT,
  type InstrumentedModule,
  type ModuleInfo,
  type SandboxLimits,
} from './types.js';
import { readConstExpr } from './validate.js';
import { Op, readInstruction } from './wasm-opcodes.js';
import { WasmReader } from './wasm-reader.js';
import { WasmWriter } from './wasm-writer.js';

const MAX_I64 = (1n << 63n) - 1n;
const SECTION_TYPE = 1;
const SECTION_IMPORT = 2;
const SECTION_FUNCTION = 3;
const SECTION_MEMORY = 5;
const SECTION_GLOBAL = 6;
const SECTION_EXPORT = 7;
const SECTION_START = 8;
const SECTION_ELEMENT = 9;
const SECTION_CODE = 10;
const SECTION_DATA = 11;
const EXPORT_FUNC = 0x00;
const EXPORT_GLOBAL = 0x03;
const BLOCK_EMPTY = 0x40;
const I32 = 0x7f;
const I64 = 0x7e;

interface Section {
  start: number;
  end: number;
}

/** A vector section: its entry count and the raw bytes of its entries. */
function vector(bytes: Uint8Array, section: Section | undefined): { count: number; entries: Uint8Array } {
  if (section === undefined) return { count: 0, entries: new Uint8Array(0) };
  const r = new WasmReader(bytes, section.start, section.end);
  const count = r.u32();
  return { count, entries: bytes.subarray(r.pos, section.end) };
}

function splitSections(bytes: Uint8Array): Map<number, Section> {
  const sections = new Map<number, Section>();
  const r = new WasmReader(bytes, 8);
  while (!r.atEnd()) {
    const id = r.u8();
    const size = r.u32();
    const start = r.skip(size);
    if (id !== 0) sections.set(id, { start, end: start + size });
  }
  return sections;
}

/** `fuel -= cost; if (fuel < 0) unreachable` — the counter stays negative after the trap so the host can tell. */
function emitFuelCheck(w: WasmWriter, fuel: number, cost: number): void {
  w.byte(Op.globalGet).u32(fuel).byte(Op.i64Const).s64(BigInt(cost)).byte(Op.i64Sub).byte(Op.globalSet).u32(fuel);
  w.byte(Op.globalGet).u32(fuel).byte(Op.i64Const).byte(0).byte(Op.i64LtS);
  w.byte(Op.if).byte(BLOCK_EMPTY).byte(Op.unreachable).byte(Op.end);
}

/**
 * `grow(delta) -> old pages | -1`: refuses a delta above the budget, and
 * charges the budget only when the memory actually grew.
 */
function emitGrowHelper(w: WasmWriter, budget: number): void {
  const body = new WasmWriter(64);
  body.byte(1).u32(1).byte(I32); // one extra i32 local: the result
  body.byte(Op.localGet).u32(0).byte(Op.globalGet).u32(budget).byte(Op.i32GtU);
  body.byte(Op.if).byte(BLOCK_EMPTY).byte(Op.i32Const).s32(-1).byte(Op.return).byte(Op.end);
  body.byte(Op.localGet).u32(0).byte(Op.memoryGrow).byte(0).byte(Op.localTee).u32(1);
  body.byte(Op.i32Const).s32(-1).byte(Op.i32Ne);
  body.byte(Op.if).byte(BLOCK_EMPTY);
  body.byte(Op.globalGet).u32(budget).byte(Op.localGet).u32(0).byte(Op.i32Sub).byte(Op.globalSet).u32(budget);
  body.byte(Op.end).byte(Op.localGet).u32(1).byte(Op.end);
  w.u32(body.size).bytes(body.view());
}

interface BodyPlan {
  /** Where the locals declarations start, where the instructions start, and where the body ends. */
  bodyStart: number;
  codeStart: number;
  end: number;
  /** Static cost of each charging point: [0] is the function body, then one per loop in order. */
  costs: number[];
  /** Offsets just after each loop's block type, where its check goes. */
  loopAt: number[];
  grows: Array<{ start: number; end: number }>;
  /** Direct calls, with the charging point that owns them. */
  calls: Array<{ point: number; callee: number }>;
  /** No loop, no call: runs a bounded number of instructions. */
  leaf: boolean;
  /** A leaf only ever called directly: its callers pay its cost, so it carries no check. */
  folded: boolean;
}

function planBody(r: WasmReader): BodyPlan {
  const bodyStart = r.pos;
  const groups = r.u32();
  for (let i = 0; i < groups; i++) {
    r.u32();
    r.u8();
  }
  const plan: BodyPlan = { bodyStart, codeStart: r.pos, end: r.end, costs: [0], loopAt: [], grows: [], calls: [], leaf: true, folded: false };
  const owners = [0]; // charging point of each open control frame
  let current = 0;
  while (owners.length > 0) {
    const start = r.pos;
    const op = readInstruction(r);
    plan.costs[current] = (plan.costs[current] as number) + 1;
    if (op === Op.loop) {
      current = plan.costs.push(0) - 1;
      plan.loopAt.push(r.pos);
      owners.push(current);
      plan.leaf = false;
    } else if (op === Op.block || op === Op.if) {
      owners.push(current);
    } else if (op === Op.end) {
      owners.pop();
      current = owners[owners.length - 1] ?? 0;
    } else if (op === Op.memoryGrow) {
      plan.grows.push({ start, end: r.pos });
    } else if (op === Op.call) {
      plan.calls.push({ point: current, callee: new WasmReader(r.bytes, start + 1, r.pos).u32() });
      plan.leaf = false;
    } else if (op === Op.callIndirect) {
      plan.leaf = false;
    }
  }
  return plan;
}

/** Writes one rewritten body, size-prefixed. */
function emitBody(bytes: Uint8Array, plan: BodyPlan, w: WasmWriter, fuel: number, growFunc: number): void {
  const out = new WasmWriter(plan.end - plan.bodyStart + 64);
  out.bytes(bytes.subarray(plan.bodyStart, plan.codeStart));
  if (!plan.folded) emitFuelCheck(out, fuel, Math.max(1, plan.costs[0] as number));
  let copied = plan.codeStart;
  let li = 0;
  let gi = 0;
  for (;;) {
    const loopAt = plan.loopAt[li];
    const grow = plan.grows[gi];
    if (loopAt !== undefined && (grow === undefined || loopAt <= grow.start)) {
      out.bytes(bytes.subarray(copied, loopAt));
      emitFuelCheck(out, fuel, Math.max(1, plan.costs[li + 1] as number));
      copied = loopAt;
      li += 1;
    } else if (grow !== undefined) {
      out.bytes(bytes.subarray(copied, grow.start));
      out.byte(Op.call).u32(growFunc);
      copied = grow.end;
      gi += 1;
    } else {
      break;
    }
  }
  out.bytes(bytes.subarray(copied, plan.end));
  w.u32(out.size).bytes(out.view());
}

/**
 * A leaf function (no loop, no call) reached only by direct calls needs no
 * check of its own: each direct call charges the leaf's cost to the caller,
 * so every executed function is charged once per call either way. Exported,
 * start and table functions keep their check since the host or
 * `call_indirect` reaches them without a charging caller.
 */
function rewriteCode(
  bytes: Uint8Array,
  code: Section,
  imported: number,
  entryPoints: ReadonlySet<number>,
  fuel: number,
  growFunc: number,
): { count: number; bodies: WasmWriter; usesGrow: boolean } {
  const r = new WasmReader(bytes, code.start, code.end);
  const count = r.u32();
  const plans: BodyPlan[] = [];
  for (let i = 0; i < count; i++) {
    const plan = planBody(r.window(r.u32()));
    plan.folded = plan.leaf && !entryPoints.has(imported + i);
    plans.push(plan);
  }
  for (const plan of plans) {
    for (const { point, callee } of plan.calls) {
      const target = plans[callee - imported];
      if (target?.folded) plan.costs[point] = (plan.costs[point] as number) + Math.max(1, target.costs[0] as number);
    }
  }
  const bodies = new WasmWriter(Math.ceil((code.end - code.start) * 1.25) + 256);
  for (const plan of plans) emitBody(bytes, plan, bodies, fuel, growFunc);
  return { count, bodies, usesGrow: plans.some((plan) => plan.grows.length > 0) };
}

/** Functions callable other than by a direct `call`: exports, the start function, table entries. */
function entryPoints(bytes: Uint8Array, sections: Map<number, Section>): Set<number> {
  const entries = new Set<number>();
  const exports = sections.get(SECTION_EXPORT);
  if (exports !== undefined) {
    const r = new WasmReader(bytes, exports.start, exports.end);
    for (let n = r.u32(); n > 0; n--) {
      r.name();
      const kind = r.u8();
      const index = r.u32();
      if (kind === 0) entries.add(index);
    }
  }
  const start = sections.get(SECTION_START);
  if (start !== undefined) entries.add(new WasmReader(bytes, start.start, start.end).u32());
  const elements = sections.get(SECTION_ELEMENT);
  if (elements !== undefined) {
    const r = new WasmReader(bytes, elements.start, elements.end);
    for (let n = r.u32(); n > 0; n--) {
      r.u32(); // flags, always 0 once validated
      readConstExpr(r);
      for (let m = r.u32(); m > 0; m--) entries.add(r.u32());
    }
  }
  return entries;
}

function concat(count: number, entries: Uint8Array, extra: (w: WasmWriter) => void, added: number): WasmWriter {
  const w = new WasmWriter(entries.length + 64);
  w.u32(count + added).bytes(entries);
  extra(w);
  return w;
}

/**
 * Returns the metered module. Runs only on bytes `validateModule` accepted
 * (with `info` from that call); anything else is a programming error.
 */
export function instrumentModule(bytes: Uint8Array, info: ModuleInfo, limits: SandboxLimits): InstrumentedModule {
  const sections = splitSections(bytes);
  const types = vector(bytes, sections.get(SECTION_TYPE));
  const imports = vector(bytes, sections.get(SECTION_IMPORT)); // only functions once validated
  const functions = vector(bytes, sections.get(SECTION_FUNCTION));
  const globals = vector(bytes, sections.get(SECTION_GLOBAL));
  const exports = vector(bytes, sections.get(SECTION_EXPORT));
  const codeSection = sections.get(SECTION_CODE);
  const startSection = sections.get(SECTION_START);
  const startFunc = startSection === undefined ? undefined : new WasmReader(bytes, startSection.start, startSection.end).u32();

  const fuelGlobal = globals.count;
  const budgetGlobal = globals.count + 1;
  const growType = types.count;
  const growFunc = imports.count + functions.count;
  const code = codeSection ? rewriteCode(bytes, codeSection, imports.count, entryPoints(bytes, sections), fuelGlobal, growFunc) : { count: 0, bodies: new WasmWriter(16), usesGrow: false };
  const helper = code.usesGrow ? 1 : 0;

  const fuel = limits.fuelPerExecution < 0n ? 0n : limits.fuelPerExecution > MAX_I64 ? MAX_I64 : limits.fuelPerExecution;
  const budget = info.memory.maximumPages - info.memory.initialPages;
  const globalExports = info.mutableGlobals.map((index) => `${GLOBAL_EXPORT_PREFIX}${index}`);

  const rebuilt = new Map<number, WasmWriter>();
  rebuilt.set(
    SECTION_TYPE,
    concat(types.count, types.entries, (w) => { if (helper) w.byte(0x60).u32(1).byte(I32).u32(1).byte(I32); }, helper),
  );
  rebuilt.set(
    SECTION_FUNCTION,
    concat(functions.count, functions.entries, (w) => { if (helper) w.u32(growType); }, helper),
  );
  rebuilt.set(SECTION_MEMORY, new WasmWriter(16).u32(1).byte(0x01).u32(info.memory.initialPages).u32(info.memory.maximumPages));
  rebuilt.set(
    SECTION_GLOBAL,
    concat(globals.count, globals.entries, (w) => {
      w.byte(I64).byte(1).byte(Op.i64Const).s64(fuel).byte(Op.end);
      w.byte(I32).byte(1).byte(Op.i32Const).s32(budget).byte(Op.end);
    }, 2),
  );
  rebuilt.set(
    SECTION_EXPORT,
    concat(exports.count, exports.entries, (w) => {
      w.name(FUEL_EXPORT).byte(EXPORT_GLOBAL).u32(fuelGlobal);
      w.name(MEMORY_BUDGET_EXPORT).byte(EXPORT_GLOBAL).u32(budgetGlobal);
      info.mutableGlobals.forEach((index, i) => w.name(globalExports[i] as string).byte(EXPORT_GLOBAL).u32(index));
      if (startFunc !== undefined) w.name(START_EXPORT).byte(EXPORT_FUNC).u32(startFunc);
    }, 2 + globalExports.length + (startFunc === undefined ? 0 : 1)),
  );
  const bodies = new WasmWriter(code.bodies.size + 128).u32(code.count + helper).bytes(code.bodies.view());
  if (helper) emitGrowHelper(bodies, budgetGlobal);
  rebuilt.set(SECTION_CODE, bodies);

  const out = new WasmWriter(bytes.length + (bytes.length >> 2) + 256);
  out.bytes(bytes.subarray(0, 8));
  for (let id = SECTION_TYPE; id <= SECTION_DATA; id++) {
    if (id === SECTION_START) continue;
    const content = rebuilt.get(id);
    const original = sections.get(id);
    if (content !== undefined) out.section(id, content);
    else if (original !== undefined) out.byte(id).u32(original.end - original.start).bytes(bytes.subarray(original.start, original.end));
  }
  return { bytes: out.toBytes(), globalExports };
}
