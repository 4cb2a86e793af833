/**
 * Agents as principals (DESIGN.md section 9): a message an agent sends is
 * checked against its capabilities, and an agent whose sends keep being
 * refused is quarantined. Transport-neutral decisions on the injected clock;
 * the dispatcher asks before it routes an agent's output and fails a
 * quarantined agent with reason `quarantined`.
 *
 * Capabilities are free-form labels; `message:send` and `message:receive`
 * are the ones that grant. An agent that names neither holds both (the
 * default); one that names either holds only what it names.
 */
import type { Clock } from '../../supervisors/index.js';

export const MESSAGE_SEND = 'message:send';
export const MESSAGE_RECEIVE = 'message:receive';

export type MessagePermission = typeof MESSAGE_SEND | typeof MESSAGE_RECEIVE;

export type SendDecision =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly permission: MessagePermission; readonly agentId: string; readonly quarantine: boolean };

export interface AgentSend {
  readonly sender: string;
  readonly senderCapabilities: readonly string[];
  readonly receiver: string;
  /** Undefined when the receiver is no agent (a client, the platform). */
  readonly receiverCapabilities: readonly string[] | undefined;
}

export interface SendPolicy {
  /** Whether `send` may go; a refusal counts against the sender. */
  check(send: AgentSend): SendDecision;
  /** A refusal decided elsewhere (the sender over its rate, the receiver's mailbox full); answers whether to quarantine now. */
  refused(agentId: string): boolean;
  /** The agent is gone (undeployed, failed): its count goes. */
  forget(agentId: string): void;
}

export interface SendPolicyOptions {
  /** `max_failed_auth_attempts`: one refusal more within the window quarantines. */
  maxRefusals: number;
  /** `failed_auth_window`. */
  windowMs: number;
  /** `auto_quarantine_suspicious_agents`. */
  autoQuarantine: boolean;
  clock: Clock;
}

export function agentHolds(capabilities: readonly string[], permission: MessagePermission): boolean {
  const names = capabilities.includes(MESSAGE_SEND) || capabilities.includes(MESSAGE_RECEIVE);
  return !names || capabilities.includes(permission);
}

export function createSendPolicy(options: SendPolicyOptions): SendPolicy {
  const { clock } = options;
  /** Times of each agent's recent refusals, oldest first, at most maxRefusals + 1. */
  const refusals = new Map<string, number[]>();
  const quarantined = new Set<string>();

  function refused(agentId: string): boolean {
    if (!options.autoQuarantine || quarantined.has(agentId)) return false;
    const now = clock.now();
    const times = (refusals.get(agentId) ?? []).filter((t) => now - t < options.windowMs);
    times.push(now);
    if (times.length > options.maxRefusals) {
      refusals.delete(agentId);
      quarantined.add(agentId);
      return true;
    }
    refusals.set(agentId, times);
    return false;
  }

  return {
    check(send) {
      const permission = !agentHolds(send.senderCapabilities, MESSAGE_SEND)
        ? MESSAGE_SEND
        : send.receiverCapabilities !== undefined && !agentHolds(send.receiverCapabilities, MESSAGE_RECEIVE)
          ? MESSAGE_RECEIVE
          : undefined;
      if (permission === undefined) return { allowed: true };
      return { allowed: false, permission, agentId: permission === MESSAGE_SEND ? send.sender : send.receiver, quarantine: refused(send.sender) };
    },
    refused,
    forget(agentId) {
      refusals.delete(agentId);
      quarantined.delete(agentId);
    },
  };
}
