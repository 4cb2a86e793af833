/**
 * The agent's share of the ABI's memory rule (DESIGN.md section 2): besides
 * `max_memory_pages`, which admission checks once per module, the memory must
 * fit the `memory_limit` of the agent that runs it. Admitted modules are
 * cached and shared by agents with different limits, so this check is per
 * deploy, against the module's `ModuleInfo`.
 */
import { SvcError } from '../errors/svc-error.js';
import type { ModuleInfo, RejectionReason } from './types.js';
import { WASM_PAGE_BYTES } from './worker-protocol.js';

/**
 * Refuses with `INVALID_MODULE` (`metadata.reason` `agent_memory_limit`) a
 * module whose initial memory exceeds the agent's limit, always, or whose
 * maximum does, unless `lowerMemoryMaximum`: then the maximum is lowered to
 * the limit, which the executor enforces through the memory budget. The limit
 * counts whole pages, as the executor does.
 */
export function checkAgentMemory(memory: ModuleInfo['memory'], memoryLimitBytes: number, lowerMemoryMaximum: boolean): void {
  const limitPages = Math.floor(memoryLimitBytes / WASM_PAGE_BYTES);
  const reason: RejectionReason = 'agent_memory_limit';
  const limit = { reason, limit: String(limitPages), memory_limit: String(memoryLimitBytes) };
  const ofLimit = `the agent's memory_limit of ${limitPages} pages (${memoryLimitBytes} bytes)`;
  if (memory.initialPages > limitPages) {
    throw new SvcError('INVALID_MODULE', `initial memory ${memory.initialPages} pages exceeds ${ofLimit}`, {
      ...limit,
      initial: String(memory.initialPages),
    });
  }
  if (memory.maximumPages > limitPages && !lowerMemoryMaximum) {
    throw new SvcError('INVALID_MODULE', `memory maximum ${memory.maximumPages} pages exceeds ${ofLimit}`, {
      ...limit,
      maximum: String(memory.maximumPages),
    });
  }
}
