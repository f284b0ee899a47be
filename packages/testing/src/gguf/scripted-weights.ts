// Weights under which greedy decoding writes a chosen sequence of pieces, whatever the prompt: a
// bigram table. Every layer adds nothing to the residual stream (attention's and the feed-forward's
// output matrices are zero), so the final hidden state is the current token's own embedding, RMS
// normalised; the output matrix then maps each token of the script to its successor.
//
// Channels of the hidden state: 0 is a constant (every embedding has it; the output matrix reads
// logit biases from it, a fallback order for when a grammar refuses the scripted token), 1 marks a
// token that is not in the script, and each scripted token that has a successor gets a channel of
// its own. Every embedding is 1 on channel 0 and 1 on its own channel (1 for unscripted tokens),
// so after the norm both read sqrt(n / 2), for every token alike. A prompt that ends in an
// unscripted token (`<|im_start|>assistant\n`) starts the script; one that ends in a scripted token
// (a template that prefills `<think>`) goes on after it. The successor's logit is SCRIPT_LOGIT and
// every other token's its bias (0 without one), so the script is followed at any temperature the
// samplers use (at 1, another token has odds of about vocabulary size * e^-30).

/** The logit of each scripted token's successor; others get their bias only. */
const SCRIPT_LOGIT = 30;
const CONSTANT_CHANNEL = 0;
const UNSCRIPTED_CHANNEL = 1;
const FIRST_SCRIPT_CHANNEL = 2;

export interface BigramTable {
  /** The hidden-state channel of each token (UNSCRIPTED_CHANNEL for those without a successor). */
  channelOf: Int32Array;
  /** Per channel, the token it leads to. */
  successorOf: Map<number, number>;
  /** Per token, its logit when the script does not choose it. */
  biases: Float32Array;
}

/**
 * The table for `pieces` in the vocabulary `tokens`: each piece is one token (pieceOf applied),
 * and each but the last must be a different token, as each has one successor.
 */
export function bigramTable(
  tokens: readonly string[],
  pieces: readonly string[],
  embeddingSize: number,
  logitBias: Readonly<Record<string, number>> = {},
): BigramTable {
  const index = new Map(tokens.map((token, id) => [token, id]));
  const ids = pieces.map((piece) => {
    const id = index.get(piece.replaceAll(' ', '\u2581'));
    if (id === undefined) throw new Error(`script piece ${JSON.stringify(piece)} is not a token of the vocabulary`);
    return id;
  });
  if (ids.length === 0) throw new Error('a script needs at least one piece');
  const channelOf = new Int32Array(tokens.length).fill(UNSCRIPTED_CHANNEL);
  const successorOf = new Map<number, number>([[UNSCRIPTED_CHANNEL, ids[0]!]]);
  for (let position = 0; position + 1 < ids.length; position++) {
    const token = ids[position]!;
    if (channelOf[token] !== UNSCRIPTED_CHANNEL)
      throw new Error(`script piece ${JSON.stringify(pieces[position])} comes twice: a token has one successor`);
    const channel = FIRST_SCRIPT_CHANNEL + position;
    if (channel >= embeddingSize)
      throw new Error(`a script of ${ids.length} pieces needs an embeddingSize of at least ${ids.length + 1}`);
    channelOf[token] = channel;
    successorOf.set(channel, ids[position + 1]!);
  }
  const biases = new Float32Array(tokens.length);
  for (const [piece, bias] of Object.entries(logitBias)) {
    const id = index.get(piece);
    if (id === undefined) throw new Error(`logitBias: ${JSON.stringify(piece)} is not a piece of the vocabulary`);
    biases[id] = bias;
  }
  return { channelOf, successorOf, biases };
}

/** A fill callback for a [rowLength, rows] matrix, each ggml row written by `row(index, out)` into zeros. */
function rowsFill(rowLength: number, row: (index: number, out: Float32Array) => void): (chunk: Float32Array) => void {
  const current = new Float32Array(rowLength);
  let offset = 0;
  return (chunk) => {
    for (let position = 0; position < chunk.length; position++, offset++) {
      const column = offset % rowLength;
      if (column === 0) {
        current.fill(0);
        row(offset / rowLength, current);
      }
      chunk[position] = current[column]!;
    }
  };
}

/** token_embd.weight: 1 on the constant channel and 1 on the token's own. */
export function embeddingFill(table: BigramTable, embeddingSize: number): (chunk: Float32Array) => void {
  return rowsFill(embeddingSize, (token, out) => {
    out[CONSTANT_CHANNEL] = 1;
    out[table.channelOf[token]!] = 1;
  });
}

/** output.weight: each token's bias on the constant channel, SCRIPT_LOGIT on the channels it succeeds. */
export function outputFill(table: BigramTable, embeddingSize: number): (chunk: Float32Array) => void {
  // Each channel of the normalised state reads sqrt(n / 2) (see the top of this file).
  const channelValue = Math.sqrt(embeddingSize / 2);
  const channelsLeadingTo = new Map<number, number[]>();
  for (const [channel, token] of table.successorOf)
    channelsLeadingTo.set(token, [...(channelsLeadingTo.get(token) ?? []), channel]);
  return rowsFill(embeddingSize, (token, out) => {
    out[CONSTANT_CHANNEL] = table.biases[token]! / channelValue;
    for (const channel of channelsLeadingTo.get(token) ?? []) out[channel] = SCRIPT_LOGIT / channelValue;
  });
}
