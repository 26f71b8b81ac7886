// What a command works with: the settings, the control store, the job queue, the
// CA and the master key, each opened on first use (listing tenants needs no CA) and
// closed when the command ends, whatever happened.
import { type ControlPaths, type ControlStore, controlPaths, openControlStore } from '@rookery/control-store';
import { type JobQueue, openJobQueue } from '@rookery/jobs';
import {
  type CertificateAuthority,
  loadOrCreateCertificateAuthority,
  loadOrCreateMasterKey,
} from '@rookery/pki';
import { ROOKERY_JOB_TYPES, type RookeryJobTypes } from '@rookery/protocol';
import type { CliIo } from './output.js';
import type { Settings } from './settings.js';

export class CliContext {
  private opened: Promise<ControlStore> | null = null;
  private openedJobs: Promise<JobQueue<RookeryJobTypes>> | null = null;
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

  /**
   * The job queue the workers run from: it lives beside the control store (the same data
   * directory or PostgreSQL database), so the CLI enqueues exactly as the control API does.
   */
  jobs(): Promise<JobQueue<RookeryJobTypes>> {
    this.openedJobs ??= openJobQueue({
      dataDir: this.settings.dataDir,
      databaseUrl: this.settings.databaseUrl,
      types: ROOKERY_JOB_TYPES,
    });
    return this.openedJobs;
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
    const openedJobs = this.openedJobs;
    this.opened = null;
    this.openedJobs = null;
    if (openedJobs) await (await openedJobs.catch(() => null))?.close();
    if (opened) await (await opened.catch(() => null))?.close();
  }
}
