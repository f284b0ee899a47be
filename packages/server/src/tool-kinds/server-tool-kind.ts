/**
 * One server tool as the service describes it, apart from running it (issue 33): its names, its
 * result block, what the model is told of it, how a result reads back to the model, what a result
 * costs the turn's context and whether usage counts it. Pure data and pure functions, on the low
 * floor: the call builder, the signing checks, the turn loop and its context budget all read the
 * list (server-tool-kinds.ts), and the runner stays in tools/<name>/. docs/extending.md has the
 * recipe for a new tool.
 */
import type { ServerToolResultType, ServerToolUse } from '@model-messages/protocol';

export interface ServerToolKind {
  /** The name the model calls it by, and the `name` of the request's tool that offers it. */
  name: string;
  /** The request tool `type` strings that offer it, dated (`web_search_20260209`). */
  types: readonly string[];
  /** The block its result is. */
  resultType: ServerToolResultType;
  /** What the model is told of it in the tool table: the input is the public API's input of the tool. */
  offer: { description: string; inputSchema: Record<string, unknown> };
  /**
   * A result block's content as the text the model reads, the same for every engine: never the
   * wire block, which is the client's (search results carry their text encoded, a fetched page
   * sits in a document object). An error content reads as what failed.
   */
  resultText(content: unknown): string;
  /**
   * Characters a result's content puts in the model's context, counted as the tool fits a result
   * to its share of the turn's input headroom (agent/context-budget.ts).
   */
  resultCharacters(content: unknown): number;
  /**
   * How a call draws on the headroom: `divided`, each call's share is what is left divided over
   * the calls still allowed of every such tool (its max_uses, else 5: the spec's research pass);
   * `single`, a call gets the share that one more call would.
   */
  headroom: 'divided' | 'single';
  /** The usage.server_tool_use counter that a call which brought back a result adds one to; none, uncounted. */
  usageCounter: keyof ServerToolUse | undefined;
}
