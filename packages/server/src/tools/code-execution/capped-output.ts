/**
 * One output stream of an execution, kept up to a byte cap. Past the cap bytes are counted and
 * dropped, not buffered, so a program printing in a loop costs the service nothing but the read.
 */
export class CappedOutput {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private dropped = 0;

  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer): void {
    const room = this.maxBytes - this.kept;
    if (room <= 0) {
      this.dropped += chunk.length;
      return;
    }
    const taken = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.chunks.push(taken);
    this.kept += taken.length;
    this.dropped += chunk.length - taken.length;
  }

  get droppedBytes(): number {
    return this.dropped;
  }

  /** The kept bytes as UTF-8; a character cut in half by the cap is left out rather than garbled. */
  text(): string {
    const bytes = Buffer.concat(this.chunks, this.kept);
    return bytes.subarray(0, this.dropped > 0 ? wholeCharacters(bytes) : bytes.length).toString('utf8');
  }
}

/** Length of `bytes` without a trailing, incomplete UTF-8 sequence. */
function wholeCharacters(bytes: Buffer): number {
  let start = bytes.length - 1;
  // Walk back over continuation bytes (10xxxxxx) to the lead byte of the last character.
  while (start >= 0 && start > bytes.length - 4 && (bytes[start]! & 0xc0) === 0x80) start -= 1;
  if (start < 0) return bytes.length;
  const lead = bytes[start]!;
  const needed = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return bytes.length - start >= needed ? bytes.length : start;
}
