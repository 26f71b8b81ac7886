// Backups and restores of the current database through the control API (POST /control/backups and
// /control/restores queue jobs the worker fleet runs), and the tenant's jobs with their state and
// progress, read again every two seconds while one is queued or running (the control API has no feed).
import { useCallback, useEffect, useState } from 'react';
import { call, controlPath, describeError } from '../api.js';
import { type Job, JobSchema, JobsSchema } from './schemas.js';

const POLL_MS = 2_000;

export function Backups({ database }: { database: string }) {
  const [jobs, setJobs] = useState<Job[]>([]);
  const [target, setTarget] = useState(`${database}-restored`);
  const [failure, setFailure] = useState('');
  const [notice, setNotice] = useState('');

  const reload = useCallback(async () => {
    const { body } = await call('GET', controlPath('jobs?limit=20'), JobsSchema);
    setJobs(body.jobs);
  }, []);

  // The queue's states (packages/jobs): a job being run is `active`.
  const active = jobs.some((job) => job.state === 'queued' || job.state === 'active');
  useEffect(() => {
    reload().catch((error: unknown) => setFailure(describeError(error)));
  }, [reload]);
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => void reload().catch(() => undefined), POLL_MS);
    return () => clearInterval(timer);
  }, [active, reload]);

  async function start(path: string, body: unknown, what: string) {
    setFailure('');
    try {
      const { body: job } = await call('POST', path, JobSchema, { body });
      setNotice(`${what}: job ${job.id} is ${job.state}.`);
      await reload();
    } catch (error) {
      setFailure(describeError(error));
    }
  }

  return (
    <section aria-labelledby="backups-heading">
      <h2 id="backups-heading">Backups and restores</h2>
      {failure && (
        <p role="alert" className="error">
          {failure}
        </p>
      )}
      {notice && <p className="ok">{notice}</p>}
      <button
        type="button"
        onClick={() => void start(controlPath('backups'), { database }, `Backup of ${database}`)}
      >
        Back up {database}
      </button>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void start(controlPath('restores'), { database, targetDatabase: target }, `Restore into ${target}`);
        }}
      >
        <label htmlFor="restore-target">
          Restore the latest backup of {database} into a new database named
        </label>
        <input id="restore-target" value={target} onChange={(event) => setTarget(event.target.value)} />
        <button type="submit">Restore</button>
      </form>
      <table>
        <caption>Jobs of this tenant, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Job</th>
            <th scope="col">Type</th>
            <th scope="col">State</th>
            <th scope="col">Progress</th>
          </tr>
        </thead>
        <tbody>
          {jobs.map((job) => (
            <tr key={job.id} data-job={job.id}>
              <td>
                <code>{job.id}</code>
              </td>
              <td>{job.type}</td>
              <td>
                {job.state}
                {job.lastError ? ` (${job.lastError})` : ''}
              </td>
              <td>{progressOf(job.progress)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** A job's progress report is the worker's own object: shown as its fields. */
function progressOf(progress: unknown): string {
  if (typeof progress !== 'object' || progress === null) return '—';
  return Object.entries(progress)
    .map(([key, value]) => `${key}: ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`)
    .join(', ');
}
