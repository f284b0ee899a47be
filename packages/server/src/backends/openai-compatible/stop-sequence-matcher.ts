/**
 * Stop sequences matched in mms, for engines that do not say which stop string ended their
 * output (llama.cpp server, Ollama, generic). Text that could be the start of a stop sequence
 * is held back until the next chunk decides; the earliest match in the text wins, as on the wire
 * the stop sequence is the first one the model produced. Pure.
 */
export class StopSequenceMatcher {
  private held = '';
  matched: string | undefined;

  constructor(private readonly sequences: readonly string[]) {}

  /** The text that can be passed on now; after a match, the text before it. */
  push(text: string): string {
    if (this.matched !== undefined) return '';
    const combined = this.held + text;
    let at = -1;
    for (const sequence of this.sequences) {
      const index = combined.indexOf(sequence);
      if (index >= 0 && (at < 0 || index < at)) {
        at = index;
        this.matched = sequence;
      }
    }
    if (at >= 0) {
      this.held = '';
      return combined.slice(0, at);
    }
    const keep = this.heldSuffixLength(combined);
    this.held = combined.slice(combined.length - keep);
    return combined.slice(0, combined.length - keep);
  }

  /** What was held back when the output ended without a match. */
  flush(): string {
    const text = this.held;
    this.held = '';
    return text;
  }

  /** The longest end of `text` that begins some stop sequence. */
  private heldSuffixLength(text: string): number {
    let longest = 0;
    for (const sequence of this.sequences) {
      for (let length = Math.min(sequence.length - 1, text.length); length > longest; length -= 1) {
        if (sequence.startsWith(text.slice(text.length - length))) {
          longest = length;
          break;
        }
      }
    }
    return longest;
  }
}
