// Debian's Chromium driven by playwright-core (its own browser downloads do not work here), with a person's
// client certificate in the browser context, as a browser with the imported PKCS#12 presents it.
// `npm test` installs the chromium package first (scripts/lib/chromium.mjs); ROOKERY_CHROMIUM names
// another binary.
import fs from 'node:fs';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';

export const CHROMIUM = process.env.ROOKERY_CHROMIUM ?? '/usr/bin/chromium';

/**
 * Without the background-networking flags Chromium reaches for Google's hosts at every start, which this
 * machine's closed network refuses; --no-sandbox because tests run as root here, as CI does.
 */
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export async function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(
      `No Chromium at ${CHROMIUM}: install Debian's chromium package (apt-get install -y chromium; npm test does it), or set ROOKERY_CHROMIUM.`,
    );
  }
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
}

/**
 * A context whose requests to `origin` present the certificate. The gateway's server certificate is issued
 * by the test's own CA, which this browser does not trust: the server is not what these tests check (the
 * gateway's TLS tests are), the client certificate is.
 */
export function personContext(
  browser: Browser,
  origin: string,
  pems: { certPem: string; keyPem: string },
  viewport = { width: 1280, height: 800 },
): Promise<BrowserContext> {
  return browser.newContext({
    ignoreHTTPSErrors: true,
    viewport,
    clientCertificates: [{ origin, cert: Buffer.from(pems.certPem), key: Buffer.from(pems.keyPem) }],
  });
}
