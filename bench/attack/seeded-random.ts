/**
 * A small seeded generator (mulberry32) for the bad-input fuzz: request N of seed S is the same
 * on every run and machine, so that a finding is reproduced with `--seed S --show N`.
 */

export class SeededRandom {
  private state: number;

  constructor(seed: number, stream = 0) {
    // Mixing the stream in gives each request its own sequence, independent of the others.
    this.state = (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(stream + 1, 0xc2b2ae35)) >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let mixed = this.state;
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, below). */
  below(below: number): number {
    return Math.floor(this.next() * below);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.below(items.length)]!;
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }
}
