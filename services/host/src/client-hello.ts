// Reads what a TLS ClientHello says before any TLS ends: the server name (SNI) and the ALPN protocols.
// The relay port's front (relay-handoff.ts) decides from them whether the connection goes to a tenant's
// process. Only the first TLS record is read: a ClientHello is a few hundred bytes (~1.3 KB with a
// post-quantum key share), far under one record's 16 KiB. Anything this does not understand is "no
// hello" — the connection then goes to the host's own TLS, which refuses what is not TLS.

/** One TLS record's largest payload (RFC 8446 §5.1) plus its 5-byte header. */
export const MAX_CLIENT_HELLO_BYTES = 16_384 + 5;

export interface ClientHello {
  serverName: string | null;
  alpn: string[];
}

/** The ClientHello in `bytes`: `incomplete` while its first record has not all arrived, null when it is not one. */
export function readClientHello(bytes: Buffer): ClientHello | 'incomplete' | null {
  if (bytes.length < 5) return bytes.length === 0 || bytes[0] === 0x16 ? 'incomplete' : null;
  // A handshake record (22) whose length fits one record.
  if (bytes[0] !== 0x16) return null;
  const recordLength = bytes.readUInt16BE(3);
  if (recordLength > 16_384) return null;
  if (bytes.length < 5 + recordLength) return 'incomplete';
  try {
    return parse(new Reader(bytes.subarray(5, 5 + recordLength)));
  } catch {
    return null; // a truncated or malformed field
  }
}

function parse(record: Reader): ClientHello | null {
  if (record.u8() !== 1) return null; // not a ClientHello
  // A ClientHello longer than this record continues in the next one: not read (the host ends TLS then).
  const hello = record.sub(record.u24());
  hello.skip(2 + 32); // legacy version, random
  hello.skip(hello.u8()); // session id
  hello.skip(hello.u16()); // cipher suites
  hello.skip(hello.u8()); // compression methods
  const found: ClientHello = { serverName: null, alpn: [] };
  if (hello.done()) return found;
  const extensions = hello.sub(hello.u16());
  while (!extensions.done()) {
    const type = extensions.u16();
    const data = extensions.sub(extensions.u16());
    if (type === 0) found.serverName = hostName(data);
    else if (type === 16) found.alpn = protocols(data);
  }
  return found;
}

/** server_name (RFC 6066 §3): the first host_name entry. */
function hostName(data: Reader): string | null {
  const list = data.sub(data.u16());
  while (!list.done()) {
    const kind = list.u8();
    const name = list.sub(list.u16());
    if (kind === 0) return name.rest().toString('latin1');
  }
  return null;
}

/** application_layer_protocol_negotiation (RFC 7301 §3.1). */
function protocols(data: Reader): string[] {
  const list = data.sub(data.u16());
  const names: string[] = [];
  while (!list.done()) names.push(list.sub(list.u8()).rest().toString('latin1'));
  return names;
}

/** Reads big-endian fields; reading past the end throws (caught above as "no hello"). */
class Reader {
  private at = 0;
  constructor(private readonly bytes: Buffer) {}
  done(): boolean {
    return this.at >= this.bytes.length;
  }
  skip(n: number): void {
    this.take(n);
  }
  u8(): number {
    return this.take(1)[0]!;
  }
  u16(): number {
    return this.take(2).readUInt16BE(0);
  }
  u24(): number {
    const b = this.take(3);
    return (b[0]! << 16) | (b[1]! << 8) | b[2]!;
  }
  sub(n: number): Reader {
    return new Reader(this.take(n));
  }
  rest(): Buffer {
    return this.take(this.bytes.length - this.at);
  }
  private take(n: number): Buffer {
    if (this.at + n > this.bytes.length) throw new RangeError('past the end of the ClientHello');
    const slice = this.bytes.subarray(this.at, this.at + n);
    this.at += n;
    return slice;
  }
}
