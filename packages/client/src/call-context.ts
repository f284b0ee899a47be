/** What every layer of one call shares: settings, deadline, caller's signal, the account. */
import type { DeclineCounter } from './answer/decline-counter.js';
import type { CallAccount } from './call-account.js';
import type { ResolvedOptions } from './client-options.js';
import type { Deadline } from './deadline.js';

export interface CallContext {
  options: ResolvedOptions;
  deadline: Deadline;
  signal: AbortSignal | undefined;
  account: CallAccount;
  declines: DeclineCounter;
}
