// The one place that loads @peculiar/x509. It needs a Reflect metadata polyfill (its
// dependency injection uses tsyringe) loaded before it, and we point it at Node's native
// WebCrypto so every signature is computed by OpenSSL inside Node, not in JavaScript.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

export { x509 };
