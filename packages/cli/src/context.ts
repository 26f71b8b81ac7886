// What a command works with: the settings, the control store, the CA and the
// master key, each opened on first use (listing tenants needs no CA) and
// closed when the command ends, whatever happened.
import { type ControlPaths, type ControlStore, controlPaths, openControlStore } from '@rookery/control';
import {
  type CertificateAuthority,
  loadOrCreateCertificateAuthority,
  loadOrCreateMasterKey,
} from '@rookery/pki';
import type { CliIo } from './output.js';
import type { Settings } from './settings.js';

export class CliContext {
  private opened: Promise<ControlStore> | null = null;
  readonly paths: ControlPaths;

  constructor(
    readonly settings: Settings,
    readonly io: CliIo,
  ) {
    this.paths = controlPaths(settings.dataDir);
  }

  store(): Promise<ControlStore> {
    this.opened ??= openControlStore({
      dataDir: this.settings.dataDir,
      databaseUrl: this.settings.databaseUrl,
    });
    return this.opened;
  }

  /** The CA in the data directory; created there on first use, as the gateway does on first start. */
  ca(): Promise<CertificateAuthority> {
    return loadOrCreateCertificateAuthority(this.paths.certificateAuthority);
  }

  masterKey(): Promise<Buffer> {
    return loadOrCreateMasterKey(this.paths.masterKey);
  }

  /** Prints `result` as JSON with --json, otherwise the human text. */
  async print(result: unknown, human: () => string | Promise<string>): Promise<void> {
    this.io.stdout.write(this.settings.json ? `${JSON.stringify(result, null, 2)}\n` : `${await human()}\n`);
  }

  async close(): Promise<void> {
    const opened = this.opened;
    this.opened = null;
    if (opened) await (await opened.catch(() => null))?.close();
  }
}
