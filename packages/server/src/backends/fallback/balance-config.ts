/**
 * How a model's `backends: [...]` shares its requests (issue 36): the `balance` and `loadEpsilon`
 * fields of a model. `failover` is the list as issue 6 made it, and the default.
 */
import { z } from 'zod';

export const BALANCE_POLICIES = ['failover', 'round-robin', 'least-busy', 'session'] as const;

export type BalancePolicyName = (typeof BALANCE_POLICIES)[number];

export const balanceConfig = z
  .enum(BALANCE_POLICIES)
  .describe(
    'How the backends share requests: failover, the first that is up takes them all (the default); round-robin, each in turn; least-busy, the one with the fewest requests in flight from this replica of mms (ties: the lower recent time to first output); session, each conversation on one backend (its x-claude-code-session-id header, else metadata.user_id, else a digest of its system prompt, tools and first user turn), placed by consistent hashing with bounded load, so that its engine keeps its prefix cached. Whichever chooses, a retryable failure before the first output moves the request to the next backend.',
  );

/** The default of `loadEpsilon`: no backend above 1.25 times the mean of requests in flight. */
export const DEFAULT_LOAD_EPSILON = 0.25;

export const loadEpsilonConfig = z
  .number()
  .positive()
  .max(10)
  .describe(
    `balance "session" only: a conversation's request moves to the next backend on the hash ring when its own already holds more than (1 + loadEpsilon) times the mean of requests in flight (counted by this replica of mms), so that a hot conversation cannot sink one engine. Default ${DEFAULT_LOAD_EPSILON}.`,
  );
