// A TCP proxy in front of PostgreSQL that can lose a transaction's answer after the commit: once armed, it
// reads the server's messages (a type byte, then a 4-byte length that counts itself) and, at the first
// CommandComplete "COMMIT", drops the connection instead of passing that message on. The transaction is
// committed; the client sees its connection end and cannot know — the failure a flush retried after a
// timeout meets in production.
import net from 'node:net';

export interface CommitCutter {
  /** A connection string to the same database through the proxy. */
  url: string;
  /** The next COMMIT's answer is lost (once). */
  arm(): void;
  /** How many answers it has cut so far. */
  readonly cuts: number;
  close(): Promise<void>;
}

const COMMAND_COMPLETE = 0x43; // 'C'
const COMMIT_TAG = Buffer.from('COMMIT\0');

export async function startCommitCutter(databaseUrl: string): Promise<CommitCutter> {
  const target = new URL(databaseUrl);
  let armed = false;
  let cuts = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', cut).on('error', cut);
    upstream.on('close', cut).on('error', cut);
    client.pipe(upstream);
    let pending = Buffer.alloc(0);
    upstream.on('data', (chunk: Buffer) => {
      // Whole messages only are passed on, so the cut falls exactly before the COMMIT's answer.
      pending = Buffer.concat([pending, chunk]);
      let offset = 0;
      while (pending.length - offset >= 5) {
        const size = 1 + pending.readUInt32BE(offset + 1);
        if (pending.length - offset < size) break;
        const message = pending.subarray(offset, offset + size);
        if (armed && message[0] === COMMAND_COMPLETE && message.subarray(5).equals(COMMIT_TAG)) {
          armed = false;
          cuts++;
          client.write(pending.subarray(0, offset));
          cut();
          return;
        }
        offset += size;
      }
      if (offset > 0) client.write(pending.subarray(0, offset));
      pending = pending.subarray(offset);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    arm() {
      armed = true;
    },
    get cuts() {
      return cuts;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
