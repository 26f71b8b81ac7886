import { describe, expect, it } from 'vitest';
import { chartHtml, niceMax } from './chart.js';

describe('niceMax', () => {
  it('rounds an axis up to 1, 2 or 5 times a power of ten', () => {
    expect(niceMax(0)).toBe(1);
    expect(niceMax(7)).toBe(10);
    expect(niceMax(741)).toBe(1000);
    expect(niceMax(150)).toBe(200);
    expect(niceMax(0.37)).toBe(0.5);
  });
});

describe('chartHtml', () => {
  it('is one self-contained page with two SVG charts and escaped text', () => {
    const intervals = [0, 1, 2].map((at) => ({
      at,
      pages: 10 * at,
      failures: at === 2 ? 1 : 0,
      times: [at, 2 * at],
      vus: 50,
    }));
    const html = chartHtml('a <b> test', 'sub & title', intervals, 1000);
    expect(html.match(/<svg /g)).toHaveLength(2);
    expect(html).toContain('a &lt;b&gt; test');
    expect(html).toContain('sub &amp; title');
    expect(html).not.toMatch(/<script|src=|href=/);
    expect(html).toContain('class="fail"'); // the interval with a failure is marked
  });
});
