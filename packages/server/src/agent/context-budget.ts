/**
 * The input headroom of one turn, shared by the server tool results appended to it (spec,
 * Limits: "divide the input headroom after the prompt across the allowed fetches"; without it
 * "whole pages accumulate and exceed the context window").
 *
 * Headroom = context window - prompt tokens - max_tokens (every output token of the turn, its
 * server_tool_use blocks included, is already inside max_tokens). Each result appended to the
 * turn is subtracted as it comes, so what is left is divided across the web search and web fetch
 * calls still allowed: a call that used less than its share leaves more for the next, and no
 * sequence of calls, code output included, can fill more than the headroom. A call whose share
 * cannot hold the least it returns (a page's truncation note, one search result) makes no request
 * and answers max_uses_exceeded (web-fetch-tool.ts, web-search-tool.ts). Results of calls made
 * by code in the sandbox reach only the code and are not subtracted.
 *
 * The tools fit results in characters, at 4 a token as in the spec's prompt-size formula. That
 * is an average: a page of digits, or of a script the vocabulary splits finely, takes more
 * tokens, and a paused turn full of such results was a 400 "prompt is too long" when sent back
 * (issue 32). Where the backend counts tokens in process (Backend.countsTokensInProcess: the
 * embedded engine), each result is measured exactly instead: the turn's prompt is counted with
 * the result appended, as the resumed request's prompt will be counted (the call and result
 * syntax of the chat template included), and a result that takes more tokens than its share is
 * cut by its tool (ServerToolRunner.fit) until it does not. So a paused turn sent back always
 * fits, with room left for what the resumed request generates: the max_tokens the turn has not
 * spent.
 */
import type { ContentBlock, MessageRequest, ServerToolResultBlock } from '@model-messages/protocol';
import { serverToolKindOfResult, serverToolKindOfType } from '../tool-kinds/server-tool-kinds.js';
import { isErrorContent } from '../tool-kinds/result-values.js';
import { errorResultFor } from './server-tool-runner.js';

export const CHARACTERS_PER_TOKEN = 4;

/**
 * Calls a web search or web fetch tool without `max_uses` is assumed to make, for dividing the
 * headroom: 5, the `max_uses` of both in the spec's research pass and web fetch shape, so an
 * unset limit gets the share a typical client's calls would. From the fifth such call on, each
 * call counts as the last one of its tool and may take what the earlier calls left.
 */
export const DEFAULT_BUDGETED_USES = 5;

/**
 * Times a result that took more tokens than its share is cut again, each time to its characters
 * scaled by the tokens its text may take over those it took: text of one kind converges in one
 * or two. Past the last, a result that would overflow the headroom is replaced (`take`).
 */
const MAX_FITS = 4;

/**
 * The request's prompt continued by `turnSoFar`, counted exactly as the backend will count the
 * resumed request (Backend.countsTokensInProcess); Infinity for a prompt past what the model's
 * context holds, which the backend refuses to count whole.
 */
export type TurnMeasure = (turnSoFar: readonly ContentBlock[]) => Promise<number>;

/** What the turn holds when a result is taken: its blocks, and the output tokens it has spent. */
export interface TurnSoFar {
  blocks: readonly ContentBlock[];
  outputTokens: number;
}

/** A result cut to at most `characters` (as `resultCharacters` counts them) by the tool that made it. */
export type ResultFit = (result: ServerToolResultBlock, characters: number) => ServerToolResultBlock;

interface BudgetedTool {
  name: string;
  maxUses: number | undefined;
}

export class ContextBudget {
  /** Tokens of headroom not yet taken by a result. */
  private remaining: number;
  private readonly tools: BudgetedTool[];

  /** `measure`: the exact count of the turn, where the backend counts in process. */
  constructor(
    private readonly request: MessageRequest,
    inputTokens: number,
    private readonly contextWindow: number,
    private readonly measure?: TurnMeasure,
  ) {
    this.remaining = Math.max(0, contextWindow - inputTokens - request.max_tokens);
    this.tools = [];
    for (const tool of request.tools ?? []) {
      // The tools whose calls divide the headroom, as their descriptors say (tool-kinds/).
      const kind = serverToolKindOfType(tool.type);
      if (kind?.headroom === 'divided')
        this.tools.push({ name: kind.name, maxUses: 'max_uses' in tool ? tool.max_uses : undefined });
    }
  }

  /** Characters of headroom not yet taken by a result, at 4 a token. */
  get remainingCharacters(): number {
    return Math.floor(this.remaining * CHARACTERS_PER_TOKEN);
  }

  /**
   * Characters the result of a call to `toolName` may take, given the calls made so far
   * (`uses`, not counting this one). A fetch with `max_content_tokens` gets its share too, and
   * the tool holds its page text to the smaller of the two: a cap alone would let the first
   * fetches take all the headroom and leave none for the calls still allowed. Code execution
   * gets one share, as one more call would.
   */
  share(toolName: string, uses: ReadonlyMap<string, number>): number {
    const callsLeft = this.tools.reduce((sum, tool) => sum + callsLeftOf(tool, uses.get(tool.name) ?? 0), 0);
    const budgeted = this.tools.some((tool) => tool.name === toolName);
    return Math.floor(this.remainingCharacters / Math.max(1, budgeted ? callsLeft : callsLeft + 1));
  }

  /** Takes a result appended to the turn out of the headroom, at 4 characters a token. */
  spend(block: ServerToolResultBlock): void {
    this.remaining = Math.max(0, this.remaining - resultCharacters(block) / CHARACTERS_PER_TOKEN);
  }

  /**
   * Takes a result made for a share of `shareCharacters` out of the headroom, and answers the
   * block to append to `turn`. At 4 characters a token, as its tool fitted it, unless the backend
   * counts in process (`measure`): then the result's tokens are what it adds to the turn's exact
   * count; one that adds more than its share is cut by `fit` until it does not, and one that
   * would still leave less than the unspent max_tokens free in the window is replaced by the
   * error its tool answers when its room in the turn is used up, max_uses_exceeded (its request
   * was made, and max_uses counts it).
   */
  async take(
    result: ServerToolResultBlock,
    shareCharacters: number,
    fit: ResultFit | undefined,
    turn: TurnSoFar,
  ): Promise<ServerToolResultBlock> {
    const measure = this.measure;
    if (!measure) {
      this.spend(result);
      return result;
    }
    // The turn ends within the window with room for the output it may still write, at least a
    // token: an engine refuses a prompt that leaves none to generate (llama.cpp's context - 1).
    const limit = this.contextWindow - Math.max(1, this.request.max_tokens - turn.outputTokens);
    const before = await measure(turn.blocks);
    const added = async (block: ServerToolResultBlock) => (await measure([...turn.blocks, block])) - before;
    // What a result adds however short its text: the template's syntax around it, which comes
    // on top of its share (the tool fitted what it returns to the share, as every backend's do).
    const wrapping = await added(errorResultFor(result, 'max_uses_exceeded'));
    const allowed = Math.min(shareCharacters / CHARACTERS_PER_TOKEN + wrapping, limit - before);
    let block = result;
    let tokens = await added(block);
    for (let attempt = 0; fit && tokens > allowed && attempt < MAX_FITS; attempt += 1) {
      const smaller = fit(block, fittedCharacters(resultCharacters(block), tokens, allowed - wrapping, wrapping));
      // Cut as far as the tool cuts it: a search's last result, a page down to its note.
      if (resultCharacters(smaller) >= resultCharacters(block)) break;
      block = smaller;
      tokens = await added(block);
    }
    if (before + tokens > limit && !isErrorContent(block.content)) {
      block = errorResultFor(block, 'max_uses_exceeded');
      tokens = wrapping;
    }
    this.remaining = Math.max(0, limit - before - tokens);
    return block;
  }
}

/**
 * Characters a result of `characters` that added `tokens` to the turn (its `wrapping` among them)
 * is cut to, for its text to take `textTokens`: scaled by the tokens its text took. One past the
 * model's context, uncounted, is taken at a token a character, and at least halved.
 */
function fittedCharacters(characters: number, tokens: number, textTokens: number, wrapping: number): number {
  const room = Math.max(0, textTokens);
  if (!Number.isFinite(tokens)) return Math.min(Math.floor(characters / 2), Math.floor(room));
  return Math.floor((characters * room) / Math.max(1, tokens - wrapping));
}

function callsLeftOf(tool: BudgetedTool, used: number): number {
  if (tool.maxUses !== undefined) return Math.max(0, tool.maxUses - used);
  return Math.max(1, DEFAULT_BUDGETED_USES - used);
}

/**
 * What a result puts in the model's context, in characters, as its tool fits it to a share (its
 * descriptor's count: a page's text, URL and title; each search result's URL, title, page age and
 * text; code's stdout and stderr). An error block counts its JSON (a few dozen characters).
 */
export function resultCharacters(block: ServerToolResultBlock): number {
  return serverToolKindOfResult(block.type)!.resultCharacters(block.content);
}
