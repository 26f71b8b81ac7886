// Shared by the k6 scripts: the run's config (written by the runner), TLS, and
// "pages": one HTTP request that a user waits for, timed and judged, tagged
// with the page's name, the test it belongs to and the phase of the run
// (warmup, ramp, full), so the runner can report each apart from the raw samples.
import { sleep } from 'k6';
import exec from 'k6/execution';
import { Counter, Rate, Trend } from 'k6/metrics';

/** Written by the runner (loadtests/src/k6-config.ts): options, URLs, files, queries, terms. */
export const config = JSON.parse(open(__ENV.ROOKERY_K6_CONFIG));

/** The options every script starts from: scenarios and thresholds from the runner, client certificates. */
export function baseOptions(extra = {}) {
  return {
    ...config.options,
    // The server certificate is verified (against the CA in SSL_CERT_FILE, set by the runner).
    insecureSkipTLSVerify: false,
    // One certificate: k6's tlsAuth `domains` never chose among several (grafana/k6#5153), so none are given.
    tlsAuth: [{ cert: open(config.tlsAuth.cert), key: open(config.tlsAuth.key) }],
    ...extra,
  };
}

const pageDuration = new Trend('page_duration', true);
const pageFailed = new Rate('page_failed');
const testsDone = new Counter('tests');

/** warmup, ramp (stepping up) or full (every virtual user running). */
export function phase() {
  const scenario = exec.scenario;
  if (scenario.name === 'warmup') return 'warmup';
  return Date.now() - scenario.startTime >= config.fullLoadAfterMs ? 'full' : 'ramp';
}

let warnings = 0;

/** k6's request duration (sending, waiting, receiving): a browser's page time, without connecting. */
const requestTime = (res) => res.timings.duration;

/**
 * Runs one page: `send()` makes the request(s) and returns an answer,
 * `ok(answer)` judges it, `timeOf(answer)` is the page time in ms (by default
 * the request duration of a k6 response).
 */
export function page(name, test, send, ok, timeOf = requestTime) {
  // The phase when the user asked, not when the answer came: a slow answer belongs to the load that caused it.
  const tags = { page: name, test, phase: phase() };
  const answer = send();
  const good = ok(answer);
  pageDuration.add(timeOf(answer), tags);
  pageFailed.add(!good, tags);
  // A few examples of what failed, not thousands: the counts are in the summary.
  if (!good && warnings < 5) {
    warnings++;
    const res = answer.res ?? answer;
    console.warn(`${name} failed: ${res.status} ${res.error || ''} ${String(res.body).slice(0, 300)}`);
  }
  return answer;
}

/**
 * A user reading the page: uniform between half and one and a half of the
 * mean think time. False once the user's scenario has run its time (the
 * warm-up, or the measured part): the user stops after the page it was on, so
 * warm-up users do not spill into the measured part and no request is cut off
 * mid-flight when k6 ends a scenario.
 */
export function think() {
  if (config.thinkMs > 0) sleep((config.thinkMs * (0.5 + Math.random())) / 1000);
  const scenario = exec.scenario;
  const length = scenario.name === 'warmup' ? config.warmupMs : config.durationMs;
  return Date.now() - scenario.startTime < length;
}

/** Runs a test: its pages in order with think time after each; counted once every page has run. */
export function runTest(test, pages) {
  for (const show of pages) {
    show();
    if (!think()) return;
  }
  testsDone.add(1, { test, phase: phase() });
}

/** One of `items`, uniformly. */
export function pick(items) {
  return items[Math.floor(Math.random() * items.length)];
}

/** A test name drawn by the weights of the mix ({name: weight}). */
export function pickTest(mix) {
  const entries = Object.entries(mix);
  let r = Math.random() * entries.reduce((sum, [, w]) => sum + w, 0);
  for (const [name, weight] of entries) {
    r -= weight;
    if (r < 0) return name;
  }
  return entries[entries.length - 1][0];
}

/** The k6 end-of-test summary as JSON, where the runner asked for it (the runner prints its own table). */
export function handleSummary(data) {
  return { [config.summaryFile]: JSON.stringify(data, null, 2) };
}
