/**
 * Spec, Client retry policy 4: each time the model skips its output tool is counted per model
 * and per tool. A 2xx response counts once, whatever else is wrong with it, a body that cannot
 * be read at all included (issue 32); a truncated
 * response or a validation error is not a decline (classify-answer.ts decides which is which).
 */

export interface DeclineCounts {
  total: number;
  byModel: Record<string, number>;
  byTool: Record<string, number>;
  /** model -> tool -> count */
  byModelAndTool: Record<string, Record<string, number>>;
}

export class DeclineCounter {
  private readonly counts = new Map<string, Map<string, number>>();

  count(model: string, tool: string): void {
    const tools = this.counts.get(model) ?? new Map<string, number>();
    tools.set(tool, (tools.get(tool) ?? 0) + 1);
    this.counts.set(model, tools);
  }

  /** Plain objects built with Object.fromEntries, so a tool named `__proto__` is just a key. */
  snapshot(): DeclineCounts {
    const byModel = new Map<string, number>();
    const byTool = new Map<string, number>();
    let total = 0;
    for (const [model, tools] of this.counts) {
      for (const [tool, count] of tools) {
        total += count;
        byModel.set(model, (byModel.get(model) ?? 0) + count);
        byTool.set(tool, (byTool.get(tool) ?? 0) + count);
      }
    }
    const byModelAndTool = Object.fromEntries(
      [...this.counts].map(([model, tools]) => [model, Object.fromEntries(tools)]),
    );
    return { total, byModel: Object.fromEntries(byModel), byTool: Object.fromEntries(byTool), byModelAndTool };
  }
}
