/**
 * A stacked bar chart of input and output tokens per bucket, drawn as SVG by hand (issue 37): the
 * one chart the console needs, in fewer lines than a chart library's options.
 */
import { html } from './html.js';

export interface ChartBar {
  /** When the bucket begins, epoch milliseconds. */
  start: number;
  input: number;
  output: number;
}

const WIDTH = 960;
const HEIGHT = 200;
const LEFT = 56;
const BOTTOM = 22;

export function UsageChart({ bars, label }: { bars: ChartBar[]; label: (start: number) => string }) {
  const highest = Math.max(1, ...bars.map((bar) => bar.input + bar.output));
  const scale = (HEIGHT - BOTTOM - 8) / highest;
  const slot = (WIDTH - LEFT) / Math.max(1, bars.length);
  const barWidth = Math.max(1, slot * 0.75);
  const every = Math.ceil(bars.length / 8);
  return html`
    <svg
      class="chart"
      viewBox=${`0 0 ${WIDTH} ${HEIGHT}`}
      preserveAspectRatio="none"
      role="img"
      aria-label="tokens per bucket"
    >
      <line class="axis" x1=${LEFT} y1=${HEIGHT - BOTTOM} x2=${WIDTH} y2=${HEIGHT - BOTTOM} />
      <text x=${LEFT - 6} y=${12} text-anchor="end">${compact(highest)}</text>
      <text x=${LEFT - 6} y=${HEIGHT - BOTTOM} text-anchor="end">0</text>
      ${bars.map((bar, index) => {
        const x = LEFT + index * slot + (slot - barWidth) / 2;
        const inputHeight = bar.input * scale;
        const outputHeight = bar.output * scale;
        return html`
          <g>
            <title>${label(bar.start)}: ${bar.input} input, ${bar.output} output tokens</title>
            <rect class="input" x=${x} y=${HEIGHT - BOTTOM - inputHeight} width=${barWidth} height=${inputHeight} />
            <rect
              class="output"
              x=${x}
              y=${HEIGHT - BOTTOM - inputHeight - outputHeight}
              width=${barWidth}
              height=${outputHeight}
            />
            ${index % every === 0 ? html`<text x=${x} y=${HEIGHT - 6}>${label(bar.start)}</text>` : null}
          </g>
        `;
      })}
    </svg>
  `;
}

function compact(value: number): string {
  return value >= 1_000_000
    ? `${(value / 1_000_000).toFixed(1)}M`
    : value >= 1000
      ? `${(value / 1000).toFixed(1)}k`
      : String(value);
}
