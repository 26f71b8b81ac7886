import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * Worker threads run plain JavaScript: the built `<name>.js`, or in
 * development and tests `<name>.ts` through tsx's loader, registered by this
 * bootstrap inside the worker (a loader given in the worker's execArgv does
 * not apply to its entry module on Node 20).
 */
const BOOTSTRAP = `
const { workerData } = require('node:worker_threads');
(async () => {
  if (workerData.tsx) (await import(workerData.tsx)).register();
  await import(workerData.entry);
})().catch((error) => { setImmediate(() => { throw error; }); });
`;

export interface SiblingWorkerEvents {
  message(raw: unknown): void;
  /** The thread died (an uncaught error, or it exited); the next `running()` starts another. */
  lost(why: string): void;
}

/**
 * The module `name` beside `callerUrl` (pass `import.meta.url`) as a worker
 * thread: started on first use, started again after it dies, and never
 * keeping the process alive unless `hold()` says work is in flight.
 */
export class SiblingWorker {
  private worker: Worker | null = null;

  constructor(
    private readonly callerUrl: string,
    private readonly name: string,
    private readonly events: SiblingWorkerEvents,
  ) {}

  get started(): boolean {
    return this.worker !== null;
  }

  /** The thread, started if it is not running. */
  running(): Worker {
    if (this.worker) return this.worker;
    const worker = startSiblingWorker(this.callerUrl, this.name);
    worker.unref();
    worker.on('message', (raw: unknown) => {
      if (this.worker === worker) this.events.message(raw);
    });
    worker.on('error', (error) => this.lose(worker, error.message));
    worker.on('exit', (code) => this.lose(worker, `it exited with code ${code}`));
    this.worker = worker;
    return worker;
  }

  /** Whether the process waits for the thread: while it owes answers, it should. */
  hold(held: boolean): void {
    if (held) this.worker?.ref();
    else this.worker?.unref();
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    await worker?.terminate();
  }

  private lose(worker: Worker, why: string): void {
    if (this.worker !== worker) return;
    this.worker = null;
    this.events.lost(why);
  }
}

/** Starts the module `name` beside `callerUrl` as a worker thread, whether the caller runs built or from its sources. */
function startSiblingWorker(callerUrl: string, name: string): Worker {
  const here = fileURLToPath(callerUrl);
  const extension = path.extname(here);
  const entry = pathToFileURL(path.join(path.dirname(here), `${name}${extension}`)).href;
  let tsx: string | null = null;
  if (extension === '.ts') {
    const api = createRequire(callerUrl)
      .resolve('tsx/esm/api')
      .replace(/index\.cjs$/, 'index.mjs');
    tsx = pathToFileURL(api).href;
  }
  return new Worker(BOOTSTRAP, {
    eval: true,
    workerData: { entry, tsx },
    // In development the workspace packages resolve to their sources, as in the parent.
    ...(tsx ? { execArgv: ['--conditions=@rookery/source'] } : {}),
  });
}
