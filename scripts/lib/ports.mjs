// Used by `npm start`: before any service starts, check that the ports it will listen on are free, so a
// clash (often a Rookery already running) is one line naming the port and the variable that moves it,
// not a service's stack trace. A port taken between this check and the service's own listen still fails
// that service's start, as before.
import net from 'node:net';

/**
 * Tries to listen on each `{ name, variable, host, port }` in turn (port 0 is skipped: the service picks
 * a free one) and returns the first that cannot be bound, with the error code, or null if all are free.
 */
export async function firstPortInUse(ports) {
  for (const entry of ports) {
    if (Number(entry.port) === 0) continue;
    const code = await tryListen(entry.host, Number(entry.port));
    if (code !== null) return { ...entry, code };
  }
  return null;
}

function tryListen(host, port) {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', (error) => resolve(error.code ?? String(error)));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(null)));
  });
}

/** What to tell the user about a port `firstPortInUse` found taken. */
export function describePortInUse({ name, variable, host, port, code }) {
  const why =
    code === 'EADDRINUSE'
      ? 'is already in use (another Rookery still running? `npm start` in another terminal?)'
      : `cannot be used (${code})`;
  return (
    `Port ${port} on ${host}, where the ${name} listens, ${why}.\n` +
    `Stop what holds it, or start on another port: ${variable}=<port> npm start (0 picks a free one).\n`
  );
}
