// A small self-contained HTML page (inline SVG, no scripts, no external files)
// with throughput and latency over the run, drawn from the per-interval
// figures of the raw samples: pages/s with the number of virtual users, and
// average and p95 page time, with failures marked.
import { mean, percentile } from './report.js';
import type { Interval } from './samples.js';

interface Series {
  label: string;
  color: string;
  points: number[];
}

const WIDTH = 900;
const HEIGHT = 260;
const MARGIN = { left: 64, right: 64, top: 28, bottom: 36 };

const escapeXml = (text: string) =>
  text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** A "nice" upper bound for an axis: 1, 2 or 5 times a power of ten, at least the maximum. */
export function niceMax(max: number): number {
  if (!(max > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  return ([1, 2, 5, 10].find((m) => m * power >= max) ?? 10) * power;
}

function lineChart(
  title: string,
  seconds: number[],
  left: Series[],
  right: Series | null,
  marks: number[],
): string {
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const maxT = Math.max(1, ...seconds);
  const x = (t: number) => MARGIN.left + (t / maxT) * plotW;
  const leftMax = niceMax(Math.max(0, ...left.flatMap((s) => s.points)));
  const rightMax = right ? niceMax(Math.max(0, ...right.points)) : 1;
  const y = (v: number, max: number) => MARGIN.top + plotH - (v / max) * plotH;
  const path = (points: number[], max: number) =>
    points
      .map((v, i) => `${i === 0 ? 'M' : 'L'}${x(seconds[i]!).toFixed(1)},${y(v, max).toFixed(1)}`)
      .join('');
  const parts: string[] = [];
  parts.push(`<text x="${MARGIN.left}" y="18" class="title">${escapeXml(title)}</text>`);
  for (let i = 0; i <= 4; i++) {
    const v = (leftMax * i) / 4;
    const yy = y(v, leftMax);
    parts.push(`<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${yy}" y2="${yy}" class="grid"/>`);
    parts.push(
      `<text x="${MARGIN.left - 6}" y="${yy + 4}" text-anchor="end">${v.toLocaleString('en')}</text>`,
    );
    if (right) {
      const rv = (rightMax * i) / 4;
      parts.push(`<text x="${WIDTH - MARGIN.right + 6}" y="${yy + 4}">${rv.toLocaleString('en')}</text>`);
    }
  }
  for (let i = 0; i <= 6; i++) {
    const t = (maxT * i) / 6;
    parts.push(`<text x="${x(t)}" y="${HEIGHT - 14}" text-anchor="middle">${Math.round(t)} s</text>`);
  }
  for (const t of marks) {
    parts.push(
      `<line x1="${x(t)}" x2="${x(t)}" y1="${MARGIN.top}" y2="${MARGIN.top + plotH}" class="fail"/>`,
    );
  }
  const all = [...left.map((s) => ({ s, max: leftMax })), ...(right ? [{ s: right, max: rightMax }] : [])];
  all.forEach(({ s, max }, i) => {
    parts.push(`<path d="${path(s.points, max)}" stroke="${s.color}" fill="none" stroke-width="1.6"/>`);
    const lx = MARGIN.left + 10 + i * 170;
    parts.push(`<rect x="${lx}" y="${MARGIN.top + 4}" width="12" height="3" fill="${s.color}"/>`);
    parts.push(`<text x="${lx + 16}" y="${MARGIN.top + 9}">${escapeXml(s.label)}</text>`);
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}">${parts.join('')}</svg>`;
}

/** CPU use over the run, in cores, at seconds since the first sample (cpu-sampler.ts). */
export interface CpuPoint {
  at: number;
  ours: number;
  others: number;
}

export function chartHtml(
  title: string,
  subtitle: string,
  intervals: readonly Interval[],
  intervalMs: number,
  cpu: readonly CpuPoint[] = [],
): string {
  const seconds = intervals.map((i) => i.at);
  const perSecond = 1000 / intervalMs;
  const throughput = lineChart(
    'Throughput',
    seconds,
    [{ label: 'pages/s (left)', color: '#1f6feb', points: intervals.map((i) => i.pages * perSecond) }],
    { label: 'virtual users (right)', color: '#8b949e', points: intervals.map((i) => i.vus) },
    intervals.filter((i) => i.failures > 0).map((i) => i.at),
  );
  const latency = lineChart(
    'Page time (ms)',
    seconds,
    [
      { label: 'average', color: '#2da44e', points: intervals.map((i) => mean(i.times)) },
      { label: 'p95', color: '#bf8700', points: intervals.map((i) => percentile(i.times, 0.95)) },
    ],
    null,
    intervals.filter((i) => i.failures > 0).map((i) => i.at),
  );
  const cpuChart =
    cpu.length === 0
      ? ''
      : lineChart(
          'CPU (cores)',
          cpu.map((c) => c.at),
          [
            { label: 'this run', color: '#8250df', points: cpu.map((c) => c.ours) },
            { label: 'other processes', color: '#cf222e', points: cpu.map((c) => c.others) },
          ],
          null,
          [],
        );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeXml(title)}</title>
<style>
body { font: 14px system-ui, sans-serif; margin: 24px; color: #1f2328; }
svg text { font: 11px system-ui, sans-serif; fill: #57606a; }
svg .title { font-size: 13px; font-weight: 600; fill: #1f2328; }
svg .grid { stroke: #d0d7de; stroke-width: 0.5; }
svg .fail { stroke: #cf222e; stroke-width: 1; opacity: 0.5; }
</style></head>
<body><h1>${escapeXml(title)}</h1><p>${escapeXml(subtitle)}</p>
${throughput}
${latency}
${cpuChart}
<p>Intervals of ${intervalMs / 1000} s. Red lines: intervals with failed pages.</p>
</body></html>
`;
}
