/** OTP `one_for_one`: only the child that died restarts; its siblings never notice. */
import type { RestartStrategy } from './strategy.js';

export const oneForOne: RestartStrategy = {
  name: 'one_for_one',
  select: (failedId) => [failedId],
};
