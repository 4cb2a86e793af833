/**
 * Issue 41, item 2: 20 spinning agents on two shared workers must not take
 * the executors from a well-behaved one. Against a real server: the echo
 * keeps answering within a bound, and a new deploy succeeds, while the
 * spinners keep being fed. Without the lanes (isolated_workers = 0) every
 * spinner held a shared worker for its whole fuel, again after each restart,
 * and the echo waited seconds behind them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { watFixture } from '../helpers/wat.js';
import { CLIENT, TEST_TIMEOUT_MS, ask, ctx, deliveredTo, deploy, example, messages, startTestServer, until, waitForState } from '../agents/agent-fixtures.js';

const SPINNERS = 20;
/** How long the echo is asked, one request after another's reply and a short pause: several rounds of every spinner. */
const WINDOW_MS = 8_000;
const PAUSE_MS = 20;
/**
 * The echo's worst round trip, from the spinners' first messages on: it waits
 * for one spinner's slice at most (50 ms; 0.16 s measured on a machine with a
 * load of 17), where one whole spinner execution alone takes 2.3–6.5 s.
 */
const ROUND_TRIP_BOUND_MS = 1_500;
const FEED_EVERY_MS = 100;

describe('runaway isolation', { timeout: TEST_TIMEOUT_MS }, () => {
  it('an echo keeps answering and a deploy succeeds while 20 spinners run on 2 workers', async () => {
    // The default fuel, as in the attack: a whole spinner execution takes 2.3–6.5 s.
    const t = await startTestServer({ overrides: { 'runtime.executor_workers': 2, 'runtime.isolated_workers': 1, 'runtime.execution_slice': '50ms', 'runtime.fuel_per_execution': 10_000_000_000 } });
    let feeding = true;
    try {
      const events = t.events();
      const echo = await deploy(t, example('echo'), 'echo');
      // The echo has been answering before the spinners come (so it is past its probation).
      await ask(t, events, echo, 'before');
      const spin = await watFixture('valid/spin.wat');
      const spinners = await Promise.all(Array.from({ length: SPINNERS }, (_, i) => deploy(t, spin, `spinner-${i}`)));
      // Fed while they live: a spinner the supervisor gave up on (failed) refuses messages, which is fine here.
      const feeder = (async () => {
        while (feeding) {
          await Promise.all(spinners.map((receiver) => t.service.send({ receiver, message_type: 'request', content: 'spin' }, ctx).catch(() => undefined)));
          await new Promise((resolve) => setTimeout(resolve, FEED_EVERY_MS));
        }
      })();
      const latencies: number[] = [];
      const from = performance.now();
      for (let i = 0; performance.now() - from < WINDOW_MS; i++) {
        const asked = performance.now();
        const { message_id } = await t.service.send({ receiver: echo, message_type: 'request', content: `ping ${i}` }, ctx);
        const reply = await until(
          () => deliveredTo(events, CLIENT).find((m) => m.in_reply_to === message_id) ?? messages(events, 'platform').find((m) => m.in_reply_to === message_id),
          `the echo's reply ${i}`,
        );
        latencies.push(performance.now() - asked);
        assert.equal(reply.sender, echo, `the echo answered ${i}, not the platform`);
        await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
      }
      const worst = Math.max(...latencies);
      assert.ok(worst < ROUND_TRIP_BOUND_MS, `worst echo round trip ${worst.toFixed(0)} ms (all: ${latencies.map((l) => l.toFixed(0)).join(' ')})`);

      assert.equal(t.server.host()!.pool.stats().runaways, SPINNERS, 'every spinner used up its slice and was marked a runaway');
      const started = performance.now();
      const fresh = await deploy(t, example('echo'), 'fresh-echo');
      await waitForState(t, fresh, 'running');
      assert.ok(performance.now() - started < 10_000, 'the deploy finished within its startup timeout');
      feeding = false;
      await feeder;
    } finally {
      feeding = false;
      await t.stop();
    }
  });
});
