/**
 * Bus throughput: events/s through `publish` with ten filtered subscribers,
 * beside a bare RxJS Subject with ten `filter` pipes measured in the same run.
 * Shaped for bench/run.ts (`BUS_BENCHMARKS`); also runs alone:
 * `node --import tsx bench/bus.bench.ts`.
 */
import { pathToFileURL } from 'node:url';
import { filter, Subject } from 'rxjs';
import { renderTable, summarise, type Row } from './harness.js';
import { createMessageBus, type MessageBus } from '../src/bus/bus.js';
import type { BusEvent } from '../src/bus/events.js';
import { compileFilter, type BusFilter } from '../src/bus/filter.js';
import { completeMessage } from '../src/bus/message.js';
import { createIdGenerator } from '../src/bus/message-id.js';

const newId = createIdGenerator();

const EVENTS_PER_ROUND = 1_000_000;
const ROUNDS = 7;
const AGENTS = 20;
const SUBSCRIBERS = 10;

/** A pool of events between 20 agents: each agent filter matches about one event in ten. */
function samples(): BusEvent[] {
  const events: BusEvent[] = [];
  for (let i = 0; i < 1000; i++) {
    const message = completeMessage({ sender: `agent-${i % AGENTS}`, receiver: `agent-${(i + 7) % AGENTS}`, message_type: i % 3 ? 'inform' : 'request' }, { newId });
    events.push({ kind: 'message', direction: 'sent', message });
  }
  return events;
}

/** Events per second of `publish`, one figure per round after a warm-up round. */
function rate(publish: (event: BusEvent) => void): number[] {
  const events = samples();
  const figures: number[] = [];
  for (let round = 0; round <= ROUNDS; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < EVENTS_PER_ROUND; i++) publish(events[i % events.length] as BusEvent);
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    if (round > 0) figures.push(EVENTS_PER_ROUND / seconds);
  }
  return figures;
}

const filterOf = (k: number, types: boolean): BusFilter => (types ? { agent_id: `agent-${k}`, message_types: ['inform'] } : { agent_id: `agent-${k}` });

function busWith(attach: (bus: MessageBus, filter: BusFilter, count: () => void) => void, types = false): number[] {
  const bus = createMessageBus();
  let received = 0;
  for (let k = 0; k < SUBSCRIBERS; k++) attach(bus, filterOf(k, types), () => received++);
  const figures = rate((e) => bus.publish(e));
  if (received === 0) throw new Error('no event reached a subscriber');
  bus.close();
  return figures;
}

export async function busThroughput(): Promise<Row[]> {
  const subject = new Subject<BusEvent>();
  let received = 0;
  for (let k = 0; k < SUBSCRIBERS; k++) subject.pipe(filter(compileFilter(filterOf(k, false)))).subscribe(() => received++);
  const raw = summarise(rate((e) => subject.next(e)));
  if (received === 0) throw new Error('no event reached a subscriber');

  const subscribed = summarise(busWith((bus, f, count) => void bus.subscribe(f).subscribe(count)));
  const both = summarise(busWith((bus, f, count) => void bus.subscribe(f).subscribe(count), true));
  const connected = summarise(busWith((bus, f, count) => void bus.connect(f, count)));
  const baseline = { name: 'RxJS Subject + 10 filter pipes', median: raw.median };
  return [
    { name: `bus publish, ${SUBSCRIBERS} subscribers filtered by agent`, unit: 'events/s', median: subscribed.median, baseline, target: '≈ the bare Subject', ok: subscribed.median > 0.8 * raw.median },
    { name: `  filtered by agent and type`, unit: 'events/s', median: both.median },
    { name: `  through bounded sinks (connect, synchronous write)`, unit: 'events/s', median: connected.median },
  ];
}

export const BUS_BENCHMARKS: ReadonlyArray<[string, () => Promise<Row[]>]> = [['bus', busThroughput]];

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(renderTable(await busThroughput()));
}
