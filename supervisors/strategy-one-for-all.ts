/**
 * OTP `one_for_all`: every child restarts, for children that cannot work
 * without each other (each holds state the others assume).
 */
import type { RestartStrategy } from './strategy.js';

export const oneForAll: RestartStrategy = {
  name: 'one_for_all',
  select: (_failedId, ids) => ids(),
};
