// Usage per minute as bar charts in plain SVG: three charts of one kind need no chart library (a
// library's smallest build would double the console's JavaScript for what forty lines draw), and SVG
// elements with attributes, not style attributes, pass the gateway's CSP (style-src 'self').
import type { UsageMinute } from './schemas.js';

const WIDTH = 600;
const HEIGHT = 120;

export function UsageChart(props: {
  minutes: UsageMinute[];
  title: string;
  value: (minute: UsageMinute) => number;
  unit: string;
}) {
  const { minutes, title, value, unit } = props;
  const values = minutes.map(value);
  const total = values.reduce((sum, v) => sum + v, 0);
  const top = Math.max(1, ...values);
  const slot = WIDTH / Math.max(1, minutes.length);
  const summary = `${title}: ${total} ${unit} in the last ${minutes.length} minutes, at most ${Math.max(0, ...values)} in a minute`;
  return (
    <figure className="chart">
      <figcaption>{summary}</figcaption>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={summary} preserveAspectRatio="none">
        <line x1="0" y1={HEIGHT - 0.5} x2={WIDTH} y2={HEIGHT - 0.5} stroke="#555" />
        {minutes.map((minute, i) => {
          const height = (value(minute) / top) * (HEIGHT - 4);
          return (
            <rect
              key={minute.Minute}
              x={i * slot + slot * 0.1}
              y={HEIGHT - height}
              width={slot * 0.8}
              height={height}
              fill="#0b5394"
            >
              <title>{`${minute.Minute.slice(11, 16)} UTC: ${value(minute)} ${unit}`}</title>
            </rect>
          );
        })}
      </svg>
    </figure>
  );
}
