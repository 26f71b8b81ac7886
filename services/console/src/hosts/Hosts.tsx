// The fleet's hosts, for operators (GET /control/hosts answers no one else): each host's address, state
// (active, draining, retired), lease (epoch, expiry, live when read) and tenants placed against its
// capacity. Read-only: draining and retiring a host stay with the CLI (`rookery host drain|retire`).
// One machine registers no host; the page says so instead of showing an empty table.
import { useEffect, useState } from 'react';
import { z } from 'zod';
import { call, describeError } from '../api.js';

const HostSchema = z.looseObject({
  hostId: z.string(),
  address: z.string(),
  capacity: z.number(),
  epoch: z.number(),
  expiresAt: z.number(),
  state: z.enum(['active', 'draining', 'retired']),
  placements: z.number(),
  live: z.boolean(),
});
const HostsSchema = z.looseObject({ hosts: z.array(HostSchema) });
type Host = z.infer<typeof HostSchema>;

export function Hosts() {
  const [hosts, setHosts] = useState<Host[] | null>(null);
  const [failure, setFailure] = useState('');

  useEffect(() => {
    call('GET', '/control/hosts', HostsSchema).then(
      ({ body }) => setHosts(body.hosts),
      (error: unknown) => setFailure(describeError(error)),
    );
  }, []);

  return (
    <div className="hosts">
      <h1>Hosts</h1>
      {failure && (
        <p role="alert" className="error">
          {failure}
        </p>
      )}
      {hosts?.length === 0 && (
        <p>
          No fleet: this gateway serves one machine, and no host has taken a lease. Hosts appear here once
          they run in fleet mode (<code>ROOKERY_HOST_ID</code>, docs/scale-out.md).
        </p>
      )}
      {hosts !== null && hosts.length > 0 && (
        <div className="table-scroll">
          <table>
            <caption>Hosts of the fleet, by id (the lease as the control store read it)</caption>
            <thead>
              <tr>
                <th scope="col">Host</th>
                <th scope="col">Address</th>
                <th scope="col">State</th>
                <th scope="col">Lease</th>
                <th scope="col">Epoch</th>
                <th scope="col">Lease ends</th>
                <th scope="col">Tenants</th>
              </tr>
            </thead>
            <tbody>
              {hosts.map((host) => (
                <tr key={host.hostId} data-host={host.hostId}>
                  <th scope="row">{host.hostId}</th>
                  <td>
                    <code>{host.address}</code>
                  </td>
                  <td>{host.state}</td>
                  <td>{host.live ? 'live' : 'expired'}</td>
                  <td>{host.epoch}</td>
                  <td>{new Date(host.expiresAt).toISOString()}</td>
                  <td>
                    {host.placements} of {host.capacity}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
