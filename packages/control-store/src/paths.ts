// Where an embedded Rookery keeps its files under one data directory. The
// gateway, the CLI and `npm start` all read this one map, so a file moved here
// moves for everyone and no process looks in a place the others never write.
import path from 'node:path';

export interface ControlPaths {
  /** The embedded control store (SQLite). */
  controlDatabase: string;
  /** The CA's directory: ca.crt and ca.key. */
  certificateAuthority: string;
  /** The 32-byte key that seals TOTP secrets. */
  masterKey: string;
  /** The shared secret between the gateway and the host on one machine. */
  internalToken: string;
  /** The gateway's own TLS certificate: server.crt and server.key. */
  serverCertificate: string;
  /** The first tenant's admin certificate written by `rookery bootstrap`. */
  adminCertificates: string;
}

export function controlPaths(dataDir: string): ControlPaths {
  const root = path.resolve(dataDir);
  const control = path.join(root, 'control');
  return {
    controlDatabase: path.join(control, 'control.db'),
    certificateAuthority: path.join(control, 'ca'),
    masterKey: path.join(control, 'master.key'),
    internalToken: path.join(control, 'internal-token'),
    serverCertificate: path.join(root, 'gateway'),
    adminCertificates: path.join(root, 'certs'),
  };
}
