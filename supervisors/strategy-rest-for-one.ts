/**
 * OTP `rest_for_one`: the child and every child started after it restart,
 * for a chain where later children depend on earlier ones (the bus on the
 * store, the API listeners on the bus).
 */
import type { RestartStrategy } from './strategy.js';

export const restForOne: RestartStrategy = {
  name: 'rest_for_one',
  *select(failedId, ids) {
    let found = false;
    for (const id of ids()) {
      if (id === failedId) found = true;
      if (found) yield id;
    }
  },
};
