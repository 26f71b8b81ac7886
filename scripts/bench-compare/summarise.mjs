// Markdown tables from a compare.sh output directory (<name>-<old|new>-<round>.json): per benchmark, every
// numeric figure of every JSON line, each round's value, each side's median, and new/old.
// Usage: node scripts/bench-compare/summarise.mjs [/tmp/bench]
import fs from 'node:fs';
import path from 'node:path';

const dir = process.argv[2] ?? '/tmp/bench';
// String fields that name a line (codec and size lines, full-text engines); other strings are skipped.
const ID_KEYS = ['size', 'codec', 'engine', 'index', 'bench'];
// Parameters of a run, not figures.
const SKIP = new Set([
  'node',
  'model',
  'cpus',
  'round',
  'rounds',
  'documents',
  'docs',
  'stream_docs',
  'subscription_docs',
  'load_concurrency',
  'save_batch_size',
  'compression_quality',
  'compression_level',
  'seed',
  'iterations',
  'queries',
]);

function flatten(prefix, value, into) {
  if (typeof value === 'number') into[prefix] = value;
  else if (Array.isArray(value)) {
    if (value.length === 1 && typeof value[0] === 'number') into[prefix] = value[0];
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) flatten(prefix ? `${prefix}.${k}` : k, v, into);
  }
}

function figures(file) {
  const result = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim().startsWith('{')) continue;
    let obj;
    try {
      obj = JSON.parse(line);
    } catch {
      continue;
    }
    if ('machine' in obj) continue;
    const ident = ID_KEYS.filter((k) => k !== 'bench' && k in obj && typeof obj[k] !== 'object')
      .map((k) => String(obj[k]))
      .join(' ');
    const flat = {};
    for (const [k, v] of Object.entries(obj)) if (!ID_KEYS.includes(k) && !SKIP.has(k)) flatten(k, v, flat);
    for (const [k, v] of Object.entries(flat)) result[ident ? `${ident} ${k}` : k] = v;
  }
  return result;
}

const median = (values) => {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const fmt = (x) => {
  if (x === null) return '—';
  if (Math.abs(x) >= 1000) return Math.round(x).toLocaleString('en-US');
  if (Math.abs(x) >= 100) return Number.isInteger(x) ? String(x) : x.toFixed(1);
  return String(Number(x.toPrecision(3)));
};

const runs = new Map(); // name -> side -> round -> figures
for (const file of fs.readdirSync(dir).sort()) {
  const m = /^(.+)-(old|new)-(\d+)\.json$/.exec(file);
  if (!m || m[1] === 'index-build-prep') continue;
  const [, name, side, round] = m;
  if (!runs.has(name)) runs.set(name, { old: new Map(), new: new Map() });
  runs.get(name)[side].set(Number(round), figures(path.join(dir, file)));
}

for (const [name, sides] of runs) {
  const keys = [];
  for (const side of ['old', 'new'])
    for (const fig of sides[side].values())
      for (const k of Object.keys(fig)) if (!keys.includes(k)) keys.push(k);
  console.log(`\n### ${name}\n`);
  console.log('| figure | old (rounds) | old median | new (rounds) | new median | new/old |');
  console.log('|---|---|---|---|---|---|');
  for (const key of keys) {
    const values = {};
    for (const side of ['old', 'new'])
      values[side] = [...sides[side].entries()]
        .sort(([a], [b]) => a - b)
        .map(([, f]) => f[key])
        .filter((v) => v !== undefined);
    const med = { old: median(values.old), new: median(values.new) };
    const ratio = med.old && med.new !== null ? (med.new / med.old).toFixed(2) : '—';
    console.log(
      `| ${key} | ${values.old.map(fmt).join(' · ') || 'missing'} | ${fmt(med.old)} | ${values.new.map(fmt).join(' · ') || 'missing'} | ${fmt(med.new)} | ${ratio} |`,
    );
  }
}
