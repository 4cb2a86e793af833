/**
 * An agent's lifecycle timeline (dashboard/lib/timeline.js): what polling
 * shows, the stream's lifecycle events taking over from it, the platform's
 * failures, the per-message states left out, order and bounds.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTimelines, isLifecycleFrame } from '../../dashboard/lib/timeline.js';
import type { Agent, Message } from '../../dashboard/lib/types.js';

const NOW = '2026-01-01T00:00:10.000Z';

function agent(fields: Partial<Agent> = {}): Agent {
  return {
    agent_id: 'a1',
    name: 'echo',
    capabilities: [],
    resources: { memory_limit: 65536, cpu_shares: 1024 },
    state: 'running',
    node_id: 'n1',
    module_sha256: '00',
    module_size: 1,
    restart_count: 0,
    messages_received: 0,
    messages_sent: 0,
    memory_bytes: 65536,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...fields,
  };
}

function failure(reason: string, content: string): Message {
  return { message_id: 'f1', sender: 'platform', receiver: 'client:x', message_type: 'failure', content, metadata: { failure_reason: reason, failed_message_id: 'm1' }, created_at: '2026-01-01T00:00:05.000Z' };
}

const summary = (t: ReturnType<typeof createTimelines>, id = 'a1'): string[] => t.entries(id).map((e) => `${e.kind}:${e.from ?? ''}>${e.to ?? ''}:${e.reason}`);

describe('isLifecycleFrame', () => {
  const table: Array<[unknown, boolean]> = [
    [{ kind: 'lifecycle', agent_id: 'a', from: 'running', to: 'restarting', reason: 'crash', at: NOW }, true],
    [{ agent_id: 'a', from: null, to: 'starting', reason: 'deploy', at: NOW }, true],
    [{ message_id: 'm', agent_id: 'a', to: 'x', reason: 'y' }, false],
    [{ message_id: 'm', sender: 'a', receiver: 'b', message_type: 'inform' }, false],
    [{ agent_id: 'a', to: 'x' }, false],
    [null, false],
    ['text', false],
  ];
  for (const [frame, expected] of table) it(`${JSON.stringify(frame)} → ${expected}`, () => assert.equal(isLifecycleFrame(frame), expected));
});

describe('timelines', () => {
  it('first poll: the deploy, restarts before the page, and a state other than running', () => {
    const t = createTimelines(() => NOW);
    t.observe(agent({ state: 'failed', restart_count: 2, updated_at: '2026-01-01T00:00:03.000Z' }));
    assert.deepEqual(summary(t), ['deployed:>starting:deployed', 'restart:>:restarted 2 times before this page opened', 'transition:>failed:state when this page opened']);
  });

  it('later polls: restarts dated by updated_at, state changes, but not running ⇄ executing', () => {
    const t = createTimelines(() => NOW);
    t.observe(agent());
    t.observe(agent({ state: 'executing' }));
    t.observe(agent({ state: 'running' }));
    t.observe(agent({ state: 'restarting', restart_count: 1, updated_at: '2026-01-01T00:00:05.000Z' }));
    t.observe(agent({ state: 'running', restart_count: 3, updated_at: '2026-01-01T00:00:07.000Z' }));
    assert.deepEqual(summary(t), [
      'deployed:>starting:deployed',
      'restart:>:restart 1 by its supervisor',
      'restart:>:restarts 2 to 3 by its supervisor',
      'transition:running>restarting:seen by polling',
      'transition:restarting>running:seen by polling',
    ]);
  });

  it('later polls: an update raises module_version, a rollback brings the lower one back; a server without versions adds neither', () => {
    const t = createTimelines(() => NOW);
    t.observe(agent({ module_version: 1 }));
    t.observe(agent({ module_version: 2, updated_at: '2026-01-01T00:00:04.000Z' }));
    t.observe(agent({ module_version: 1, updated_at: '2026-01-01T00:00:06.000Z' }));
    assert.deepEqual(summary(t), [
      'deployed:>starting:deployed',
      'update:>:updated from version 1 to 2',
      'rollback:>:rolled back to version 1: version 2 crashed within its rollback window',
    ]);
    const older = createTimelines(() => NOW);
    older.observe(agent());
    older.observe(agent({ updated_at: '2026-01-01T00:00:04.000Z' }));
    assert.deepEqual(summary(older), ['deployed:>starting:deployed']);
  });

  it('once the stream gives a lifecycle event for the agent, polling adds no states, and the message path stays out', () => {
    const t = createTimelines(() => NOW);
    t.observe(agent());
    t.lifecycle({ agent_id: 'a1', from: 'running', to: 'executing', reason: 'message', at: '2026-01-01T00:00:01.000Z' });
    t.lifecycle({ agent_id: 'a1', from: 'executing', to: 'restarting', reason: 'crash: trap', at: '2026-01-01T00:00:02.000Z' });
    t.observe(agent({ state: 'restarting', restart_count: 1 }));
    t.lifecycle({ agent_id: 'a1', from: 'restarting', to: 'starting', reason: 'backoff elapsed', at: '2026-01-01T00:00:03.000Z' });
    assert.deepEqual(summary(t), ['deployed:>starting:deployed', 'transition:executing>restarting:crash: trap', 'transition:restarting>starting:backoff elapsed']);
  });

  it('a platform failure: a crash when the execution crashed, a failure otherwise', () => {
    const t = createTimelines(() => NOW);
    t.failure('a1', failure('execution_crashed', 'execution crashed: trap: unreachable'));
    t.failure('a1', failure('mailbox_full', 'mailbox full'));
    t.undeployed('a1');
    assert.deepEqual(summary(t), ['crash:>:execution crashed: trap: unreachable', 'failure:>:mailbox full', 'undeployed:>:undeployed']);
    assert.deepEqual(t.entries('a1').map((e) => e.source), ['stream', 'stream', 'api']);
  });

  it('in time order, entries of one instant in the order learnt; each agent its own; bounded', () => {
    const t = createTimelines(() => NOW, 3);
    t.lifecycle({ agent_id: 'a1', from: 'running', to: 'stopping', reason: 'b', at: '2026-01-01T00:00:02.000Z' });
    t.lifecycle({ agent_id: 'a1', from: null, to: 'starting', reason: 'a', at: '2026-01-01T00:00:01.000Z' });
    t.lifecycle({ agent_id: 'a1', from: 'stopping', to: 'stopped', reason: 'c', at: '2026-01-01T00:00:02.000Z' });
    t.lifecycle({ agent_id: 'a2', from: null, to: 'starting', reason: 'other', at: NOW });
    assert.deepEqual(t.entries('a1').map((e) => e.reason), ['a', 'b', 'c']);
    t.lifecycle({ agent_id: 'a1', from: 'stopped', to: 'starting', reason: 'd', at: '2026-01-01T00:00:03.000Z' });
    assert.deepEqual(t.entries('a1').map((e) => e.reason), ['b', 'c', 'd']);
    assert.deepEqual(t.entries('a2').map((e) => e.reason), ['other']);
    t.forget('a1');
    assert.deepEqual(t.entries('a1'), []);
    assert.deepEqual(t.entries('nobody'), []);
  });
});
