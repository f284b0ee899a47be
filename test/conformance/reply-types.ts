/**
 * Why both versions get the same replies (docs/decisions/0004): the reply types of the official
 * client that sends `2023-06-01` (`@anthropic-ai/sdk` 0.137) and of the one that sends
 * `2026-10-21` (`@anthropic-ai/sdk-v1`, 1.x) are identical, checked here by the compiler. After a
 * bump of either client, an error below names the reply that now differs: that is when the
 * service answers it per version (`apiVersion` on the route context), with a conformance test.
 *
 * The suite drives the 1.x client through 0.137's declarations (support.ts); these checks are
 * what make that sound.
 */
import type * as Messages0 from '@anthropic-ai/sdk/resources/messages';
import type * as Messages1 from '@anthropic-ai/sdk-v1/resources/messages';
import type * as Models0 from '@anthropic-ai/sdk/resources/models';
import type * as Models1 from '@anthropic-ai/sdk-v1/resources/models';
import type * as Shared0 from '@anthropic-ai/sdk/resources/shared';
import type * as Shared1 from '@anthropic-ai/sdk-v1/resources/shared';

/** True when A and B are the same type (not just assignable each way: an added optional field counts). */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

/**
 * `model` is a string on the wire for both: each client's `Model` is its list of known model names
 * or any string, and 1.x lists two more names, which only changes what an editor suggests.
 */
type WithModelString<M extends { model: unknown }> = Omit<M, 'model'> & { model: string };

type MessageStart0 = Messages0.RawMessageStartEvent;
type MessageStart1 = Messages1.RawMessageStartEvent;

export const sameReplyTypes = {
  message: true satisfies Same<WithModelString<Messages0.Message>, WithModelString<Messages1.Message>>,
  modelIsAnyString: true satisfies Same<string extends Messages1.Model ? true : false, true>,
  contentBlock: true satisfies Same<Messages0.ContentBlock, Messages1.ContentBlock>,
  stopDetails: true satisfies Same<Messages0.Message['stop_details'], Messages1.Message['stop_details']>,
  usage: true satisfies Same<Messages0.Usage, Messages1.Usage>,
  messageStart: true satisfies Same<
    Omit<MessageStart0, 'message'> & { message: WithModelString<MessageStart0['message']> },
    Omit<MessageStart1, 'message'> & { message: WithModelString<MessageStart1['message']> }
  >,
  otherStreamEvents: true satisfies Same<
    Exclude<Messages0.RawMessageStreamEvent, MessageStart0>,
    Exclude<Messages1.RawMessageStreamEvent, MessageStart1>
  >,
  tokensCount: true satisfies Same<Messages0.MessageTokensCount, Messages1.MessageTokensCount>,
  modelInfo: true satisfies Same<Models0.ModelInfo, Models1.ModelInfo>,
  errorResponse: true satisfies Same<Shared0.ErrorResponse, Shared1.ErrorResponse>,
};
