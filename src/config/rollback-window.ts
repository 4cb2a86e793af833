/**
 * An update's rollback window (UpdateAgent's `rollback_window`, the setting
 * `runtime.update_rollback_window`): how long a new module is on probation.
 * A bare whole number counts messages the agent receives after the update; a
 * duration needs its unit (`30s`, `5m`), since a bare number already means
 * messages. `0` turns rollback off.
 */
import { formatDuration, parseDuration } from './units.js';

export type RollbackWindow = { kind: 'messages'; messages: number } | { kind: 'duration'; ms: number } | { kind: 'off' };

/** The longest window: a timer beyond it would not fire as asked (setting.ts `timeout`). */
const MAX_WINDOW_MS = 2_147_483_647;
const MAX_WINDOW_MESSAGES = 1_000_000_000;

export function parseRollbackWindow(raw: unknown): RollbackWindow | undefined {
  const text = typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw.trim() : undefined;
  if (text === undefined || text === '') return undefined;
  if (/^\d+$/.test(text)) {
    const messages = Number(text);
    if (messages === 0) return { kind: 'off' };
    return messages <= MAX_WINDOW_MESSAGES ? { kind: 'messages', messages } : undefined;
  }
  if (!/[a-z]$/i.test(text)) return undefined;
  const ms = parseDuration(text);
  if (ms === undefined || ms > MAX_WINDOW_MS) return undefined;
  return ms === 0 ? { kind: 'off' } : { kind: 'duration', ms };
}

export function formatRollbackWindow(window: RollbackWindow): string {
  switch (window.kind) {
    case 'off':
      return '0';
    case 'messages':
      return String(window.messages);
    case 'duration':
      return formatDuration(window.ms);
  }
}
