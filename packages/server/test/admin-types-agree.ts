/**
 * The console's restated types of the admin replies (packages/server/console/src/admin-types.ts:
 * a browser project, which cannot import the server's sources) against the server's own
 * (src/routes/admin/admin-replies.ts). Not a test file: the root type check, which `npm test`
 * runs, reads it, and a reply type changed on one side and not the other fails it here.
 */
import type * as Console from '../console/src/admin-types.js';
import type * as Server from '../src/routes/admin/admin-replies.js';

/** True only when A and B are the same type, optional fields and readonly included. */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

export const adminTypesAgree: {
  liveRequest: Same<Console.LiveRequest, Server.LiveRequest>;
  usageRange: Same<Console.UsageRange, Server.UsageRange>;
  usageBucket: Same<Console.UsageBucket, Server.UsageBucket>;
  usageReply: Same<Console.UsageReply, Server.UsageReply>;
  limitStanding: Same<Console.LimitStanding, Server.LimitStanding>;
  keyEntry: Same<Console.KeyEntry, Server.KeyEntry>;
  recentFigures: Same<Console.RecentFigures, Server.RecentFigures>;
  engineModel: Same<Console.EngineModel, Server.EngineModel>;
  engineEvent: Same<Console.EngineEvent, Server.RecentEvent>;
  enginesReply: Same<Console.EnginesReply, Server.EnginesReply>;
} = {
  liveRequest: true,
  usageRange: true,
  usageBucket: true,
  usageReply: true,
  limitStanding: true,
  keyEntry: true,
  recentFigures: true,
  engineModel: true,
  engineEvent: true,
  enginesReply: true,
};
