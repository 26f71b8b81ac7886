// One place that turns the store's certificate settings into Node TLS options, so the HTTP agent
// (undici) and the WebSockets (ws) present the same client certificate and trust the same CA.
import net from 'node:net';

/** The client certificate: PEM certificate + key, or a PKCS#12 bundle with its passphrase. */
export type ClientCertificate =
  | { cert: string | Buffer; key: string | Buffer }
  | { pfx: Buffer; passphrase?: string };

export interface TlsClientOptions {
  cert?: string | Buffer;
  key?: string | Buffer;
  pfx?: Buffer;
  passphrase?: string;
  ca?: string | Buffer | Array<string | Buffer>;
  servername?: string;
}

export function tlsClientOptions(
  url: URL,
  certificate: ClientCertificate,
  ca: TlsClientOptions['ca'] | undefined,
  servername: string | undefined,
): TlsClientOptions {
  const options: TlsClientOptions =
    'pfx' in certificate
      ? { pfx: certificate.pfx, passphrase: certificate.passphrase }
      : { cert: certificate.cert, key: certificate.key };
  if (ca !== undefined) options.ca = ca;
  // SNI carries host names only: an IP address is checked against the certificate's IP entries instead.
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const name = servername ?? (net.isIP(host) ? undefined : host);
  if (name !== undefined) options.servername = name;
  return options;
}
