// The cold-start benchmark's tenant: one database of generated NuGet package versions (@rookery/datagen,
// seed 1) filling at least the asked size on disk. It is loaded once, through a real tenant process and its
// bulk insert (the way data gets there in service), and kept under the temp directory between runs: loading
// 100 MB takes longer than the benchmark itself. A marker file written last says the copy is complete.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generatePackages } from '@rookery/datagen';
import pino from 'pino';
import { loadHostConfig, type SupervisorConfig, TenantSupervisor } from '../src/index.js';
import { TenantClient } from '../src/test-fixtures/tenant-client.js';

export const TENANT = 'bench';
export const DATABASE = 'packages';
/** Bumped when the generated content changes, so an old cached copy is not reused. */
const LAYOUT_VERSION = 2;
const DOCUMENTS_PER_ROUND = 25_000;
/** Ids kept for the benchmark to read: every this-many-th document, spread over the whole database. */
const SAMPLE_EVERY = 97;

export interface Dataset {
  /** The host's data directory (the tenant lives in `tenants/<TENANT>`). */
  dataDir: string;
  documents: number;
  /** Bytes under the tenant's directory. */
  bytes: number;
  /** Ids of documents spread over the database. */
  sampleIds: string[];
  /** The PackageId of each of those documents, for queries. */
  samplePackageIds: string[];
}

/** A query the dataset's automatic index (built with the dataset) answers: one package's versions. */
export const PACKAGE_QUERY = 'from Packages where PackageId = $id';

export type Log = (message: string) => void;

/** A host configuration for the benchmark: the defaults, minus what would only add noise. */
export function benchHostConfig(
  dataDir: string,
  overrides: Partial<SupervisorConfig> = {},
): SupervisorConfig {
  return loadHostConfig(
    {},
    {
      dataDir,
      internalToken: 'bench-internal-token-0123456789',
      tenantLogLevel: 'warn',
      // The benchmark stops tenants itself; the idle timer would only race it.
      idleStopMs: 0,
      // A wake answers 503 TenantStarting after 2 s and the start goes on; the benchmark times the start
      // to its end (on a loaded machine a cold start can pass 2 s), so it waits for it instead.
      startDeadlineMs: 60_000,
      ...overrides,
    },
  );
}

/** The cached dataset of at least `megabytes`, loading it first when there is none yet. */
export async function ensureDataset(megabytes: number, log: Log): Promise<Dataset> {
  const dataDir = path.join(os.tmpdir(), `rookery-bench-cold-start-v${LAYOUT_VERSION}-${megabytes}mb`);
  const marker = path.join(dataDir, 'dataset.json');
  if (fs.existsSync(marker)) {
    const dataset = JSON.parse(fs.readFileSync(marker, 'utf8')) as Dataset;
    log(`dataset: cached in ${dataDir} (${dataset.documents} documents, ${mb(dataset.bytes)} MB)`);
    return dataset;
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.mkdirSync(dataDir, { recursive: true });
  log(`dataset: loading ${megabytes} MB of package versions into ${dataDir} (once; cached for later runs)`);
  const supervisor = new TenantSupervisor(benchHostConfig(dataDir, { spareProcesses: 0 }), {
    logger: pino({ level: 'warn' }, pino.destination(2)),
  });
  const client = async () => new TenantClient((await supervisor.wake(TENANT)).socketPath);
  try {
    const first = await client();
    const created = await first.call('PUT', '/admin/databases', { Name: DATABASE });
    await first.close();
    if (created.status !== 201) throw new Error(`creating the database: ${created.status} ${created.text}`);
    const documents = generatePackages({ seed: 1, packageVersions: Number.MAX_SAFE_INTEGER });
    const sampleIds: string[] = [];
    const samplePackageIds: string[] = [];
    let loaded = 0;
    let bytes = 0;
    while (bytes < megabytes * 1024 * 1024) {
      const lines: string[] = [];
      for (let i = 0; i < DOCUMENTS_PER_ROUND; i++) {
        const { id, ...document } = documents.next().value!;
        if ((loaded + i) % SAMPLE_EVERY === 0) {
          sampleIds.push(id);
          samplePackageIds.push(document.PackageId);
        }
        lines.push(JSON.stringify({ Id: id, Document: document }));
      }
      const tenant = await client();
      const inserted = await tenant.bulkInsert(DATABASE, lines);
      await tenant.close();
      if (inserted.status !== 200 || inserted.json.Type !== 'Completed')
        throw new Error(`bulk insert failed: ${inserted.status} ${inserted.text.slice(-300)}`);
      loaded += lines.length;
      // Measured stopped: the tenant checkpoints its WAL on the way out, and the files left are what a
      // cold start opens (a running tenant's WAL would count the same pages twice).
      await supervisor.stop(TENANT);
      bytes = (await supervisor.stats(TENANT)).bytesOnDisk;
      log(`dataset: ${loaded} documents, ${mb(bytes)} MB`);
    }
    // The automatic index behind PACKAGE_QUERY, built now and caught up: a cold start's first query then
    // finds it ready, as a tenant's usual queries would.
    const tenant = await client();
    const indexed = await tenant.call('POST', `/databases/${DATABASE}/queries`, {
      Query: PACKAGE_QUERY,
      QueryParameters: { id: samplePackageIds[0] },
      WaitForNonStaleResults: true,
      WaitForNonStaleResultsTimeoutMs: 600_000,
    });
    await tenant.close();
    if (indexed.status !== 200) throw new Error(`indexing failed: ${indexed.status} ${indexed.text}`);
    await supervisor.stop(TENANT);
    bytes = (await supervisor.stats(TENANT)).bytesOnDisk;
    log(`dataset: automatic index built; ${mb(bytes)} MB`);
    const dataset: Dataset = { dataDir, documents: loaded, bytes, sampleIds, samplePackageIds };
    fs.writeFileSync(marker, JSON.stringify(dataset));
    return dataset;
  } finally {
    await supervisor.shutdown();
  }
}

export function mb(bytes: number): number {
  return Math.round((bytes / 1024 / 1024) * 10) / 10;
}
