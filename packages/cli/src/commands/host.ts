// rookery host list|drain|activate|retire: the fleet's hosts as the control store knows them
// (packages/control-store README, "Leases and placements"). The CLI only changes a host's state in the
// store; a draining host notices on its next lease renewal and moves its tenants away itself, one by one
// (services/host/src/drain.ts), so the operator never needs to reach the host. `--wait` watches the
// store's count of tenants still placed there. Rolling upgrades: docs/scale-out.md, "Drains and rolling
// upgrades".
import { setTimeout as sleep } from 'node:timers/promises';
import type { HostRecord } from '@rookery/control-store';
import { RookeryError } from '@rookery/protocol';
import type { Command } from 'commander';
import { z } from 'zod';
import { action } from '../action.js';
import type { CliContext } from '../context.js';
import { parseCommandInput, waitOption } from '../inputs.js';
import { type CliIo, formatTable, isoTime } from '../output.js';

/** A drain moves tenants one at a time, each a stop and a start elsewhere: minutes for a full host. */
const DEFAULT_WAIT_SECONDS = 600;
const POLL_MS = 200;

const HostOnly = z.object({ args: z.tuple([z.string().min(1)]), options: z.object({}) });
const DrainInput = z.object({
  args: z.tuple([z.string().min(1)]),
  options: z.object({ wait: waitOption(DEFAULT_WAIT_SECONDS, 24 * 3600) }),
});
const NoInput = z.object({ args: z.tuple([]), options: z.object({}) });

const tenants = (n: number) => `${n} tenant${n === 1 ? '' : 's'}`;

export function registerHostCommands(program: Command, io: CliIo): void {
  const host = program
    .command('host')
    .description("the fleet's hosts: list them, drain one (its tenants move away), activate or retire it");

  host
    .command('list')
    .description('list the hosts: state, lease, epoch, tenants placed and capacity, address')
    .action(
      action(io, async (context, input) => {
        parseCommandInput(NoInput, input);
        const hosts = await (await context.store()).listHosts();
        await context.print({ hosts }, () =>
          hosts.length === 0
            ? 'No host has registered: a fleet host registers when it starts with ROOKERY_HOST_ID (services/host/README.md, "Fleet mode").'
            : formatTable(
                ['HOST', 'STATE', 'LEASE', 'EPOCH', 'TENANTS', 'ADDRESS', 'LEASE EXPIRES'],
                hosts.map((h) => [
                  h.hostId,
                  h.state,
                  h.live ? 'live' : 'expired',
                  h.epoch,
                  `${h.placements}/${h.capacity}`,
                  h.address,
                  isoTime(h.expiresAt),
                ]),
              ),
        );
      }),
    );

  host
    .command('drain')
    .description(
      'no new tenants on the host; it moves its tenants to other hosts one by one (rolling upgrades)',
    )
    .argument('<host>')
    .option('--wait [seconds]', `wait until every tenant has moved (default ${DEFAULT_WAIT_SECONDS} s)`)
    .action(
      action(io, async (context, input) => {
        const { args, options } = parseCommandInput(DrainInput, input, ['host']);
        const store = await context.store();
        const draining = await store.drainHost(args[0]);
        if (options.wait === null) {
          await context.print(draining, () => drainingText(draining));
          return;
        }
        await waitForDrain(context, draining, options.wait);
      }),
    );

  host
    .command('activate')
    .description('the host takes new tenants again (after a drain and its upgrade)')
    .argument('<host>')
    .action(
      action(io, async (context, input) => {
        const [id] = parseCommandInput(HostOnly, input, ['host']).args;
        const active = await (await context.store()).activateHost(id);
        await context.print(
          active,
          () =>
            `Host ${id} is active: new tenants may be placed on it (${tenants(active.placements)} there now).`,
        );
      }),
    );

  host
    .command('retire')
    .description('take a drained host with no tenants left out of the fleet')
    .argument('<host>')
    .action(
      action(io, async (context, input) => {
        const [id] = parseCommandInput(HostOnly, input, ['host']).args;
        const retired = await (await context.store()).retireHost(id);
        await context.print(
          retired,
          () =>
            `Host ${id} is retired: out of the fleet and of the reaper's count. A host process started again with this id registers but takes no tenants until \`rookery host activate ${id}\`.`,
        );
      }),
    );
}

function drainingText(host: HostRecord): string {
  const id = host.hostId;
  const what =
    host.placements === 0
      ? `Host ${id} is draining: it has no tenants; retire it (\`rookery host retire ${id}\`) or activate it again.`
      : `Host ${id} is draining: its ${tenants(host.placements)} ${host.placements === 1 ? 'is' : 'are'} moved to other hosts one by one by the host itself; \`rookery host list\` shows what is left, --wait waits.`;
  return host.live
    ? what
    : `${what} Its lease has expired: the host is not running, so it moves nothing itself; the reaper re-places its tenants once the lease is past its grace.`;
}

/** Polls the host's placement count, printing "moved k/n" as it falls, until none is left or time is up. */
async function waitForDrain(context: CliContext, draining: HostRecord, seconds: number): Promise<void> {
  const store = await context.store();
  const id = draining.hostId;
  const total = draining.placements;
  const progress = (line: string) => {
    if (!context.settings.json) context.io.stdout.write(`${line}\n`);
  };
  progress(`Host ${id} is draining: ${tenants(total)} to move.`);
  const deadline = Date.now() + seconds * 1000;
  let left = total;
  for (;;) {
    const now = await store.getHost(id);
    if (!now)
      throw new RookeryError(
        'HostNotFound',
        `Host "${id}" was removed from the control store while it drained.`,
      );
    if (now.placements !== left) {
      left = now.placements;
      progress(`moved ${Math.max(0, total - left)}/${total}`);
    }
    if (left === 0) break;
    if (Date.now() >= deadline) {
      throw new RookeryError(
        'HostNotEmpty',
        `Host ${id} still has ${left} of its ${tenants(total)} after ${seconds} s; the drain goes on. Is the host running (\`rookery host list\`: a live lease) and is there room elsewhere (its log says why a tenant did not move)? Run the command again to keep waiting.`,
        { hostId: id, total, left },
      );
    }
    await sleep(POLL_MS);
  }
  await context.print(
    { hostId: id, state: 'draining', total, moved: total, left: 0 },
    () =>
      `Host ${id} is drained: every tenant moved. Upgrade it and \`rookery host activate ${id}\`, or \`rookery host retire ${id}\`.`,
  );
}
