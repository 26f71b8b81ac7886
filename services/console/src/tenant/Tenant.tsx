// The tenant page, for tenant admins (the control API answers only them): storage against the quota, usage
// per minute over the last hour, principals and certificates, two-factor enrolment, backups and restores of the current database.
import { useEffect, useState } from 'react';
import { call, describeError, usagePath } from '../api.js';
import { Backups } from './Backups.js';
import { Principals } from './Principals.js';
import { StorageChart } from './StorageChart.js';
import { type Storage, type UsageMinute, UsageSchema } from './schemas.js';
import { UsageChart } from './UsageChart.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

/** The hour's sixty minutes, oldest first: the store answers only minutes with traffic, the chart shows them all. */
function lastHour(recorded: UsageMinute[], to: number): UsageMinute[] {
  const byMinute = new Map(recorded.map((m) => [Date.parse(m.Minute), m]));
  const last = Math.floor(to / MINUTE_MS) * MINUTE_MS;
  return Array.from({ length: 60 }, (_, i) => {
    const at = last - (59 - i) * MINUTE_MS;
    const Minute = new Date(at).toISOString();
    return byMinute.get(at) ?? { Minute, Requests: 0, BytesIn: 0, BytesOut: 0, WorkUnits: 0 };
  });
}

export function Tenant({ database }: { database: string }) {
  const [minutes, setMinutes] = useState<UsageMinute[] | null>(null);
  const [storage, setStorage] = useState<Storage | null>(null);
  const [failure, setFailure] = useState('');

  useEffect(() => {
    const to = Date.now();
    call('GET', usagePath(to - HOUR_MS, to), UsageSchema).then(
      ({ body }) => {
        setMinutes(lastHour(body.Minutes, to));
        setStorage(body.Storage);
      },
      (error: unknown) => setFailure(describeError(error)),
    );
  }, []);

  return (
    <div className="tenant">
      <h1>Tenant</h1>
      <section aria-labelledby="usage-heading">
        <h2 id="usage-heading">Usage in the last hour, per minute</h2>
        {failure && (
          <p role="alert" className="error">
            {failure}
          </p>
        )}
        {storage && <StorageChart bytes={storage.Bytes} quotaBytes={storage.QuotaBytes} />}
        {minutes && (
          <>
            <UsageChart minutes={minutes} title="Requests" unit="requests" value={(m) => m.Requests} />
            <UsageChart
              minutes={minutes}
              title="Bytes in and out"
              unit="bytes"
              value={(m) => m.BytesIn + m.BytesOut}
            />
            <UsageChart minutes={minutes} title="Work units" unit="work units" value={(m) => m.WorkUnits} />
          </>
        )}
      </section>
      <Principals />
      {database !== '' && <Backups database={database} />}
    </div>
  );
}
