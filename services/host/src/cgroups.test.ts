// The per-tenant OS limits against real directories standing in for /sys/fs/cgroup: one where cgroup v2
// is absent (most containers and laptops), and one laid out like a cgroup v2 root we may write to.
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { makeTempDir } from '@rookery/testkit';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { CgroupLimiter } from './cgroups.js';

const LIMITS = { memoryBytes: 256 * 1024 * 1024, cpus: 0.5 };

/** A real pino logger whose lines are kept, parsed, in `lines`. */
function capturingLogger(): { log: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: pino({ level: 'info' }, sink), lines };
}

const temps: Array<() => void> = [];
function tempRoot(): string {
  const { dir, cleanup } = makeTempDir('rookery-cgroup-');
  temps.push(cleanup);
  return dir;
}
afterEach(() => {
  for (const cleanup of temps.splice(0)) cleanup();
});

describe('CgroupLimiter', () => {
  it('says once, at start, in one line without a stack, that limits are unavailable where there is no cgroup v2', () => {
    const root = path.join(tempRoot(), 'no-cgroup-here');
    const { log, lines } = capturingLogger();
    const limiter = new CgroupLimiter(root, LIMITS, log);

    // Said at start, before any tenant.
    expect(lines).toHaveLength(1);
    expect(limiter.enabled).toBe(false);
    // Every tenant start after that: no limits, and nothing more said.
    expect(limiter.apply('acme', process.pid)).toBe(false);
    expect(limiter.apply('globex', process.pid)).toBe(false);
    expect(lines).toHaveLength(1);

    const [line] = lines;
    expect(line!.level).toBe(40);
    expect(line!.err).toBeUndefined();
    expect(JSON.stringify(line)).not.toContain('    at ');
    expect(line!.msg).toBe(
      `per-tenant OS limits (cgroup v2 memory.max / cpu.max) are unavailable here: ${root} is not a cgroup v2 ` +
        'hierarchy (it has no cgroup.controllers); tenants run with the Node heap limit only',
    );
  });

  it('says nothing when no limits are configured', () => {
    const { log, lines } = capturingLogger();
    const limiter = new CgroupLimiter(path.join(tempRoot(), 'none'), { memoryBytes: 0, cpus: 0 }, log);
    expect(limiter.apply('acme', process.pid)).toBe(false);
    expect(lines).toEqual([]);
  });

  it('names the missing controllers in its one line', () => {
    const root = tempRoot();
    fs.writeFileSync(path.join(root, 'cgroup.controllers'), 'cpuset io pids\n');
    const { log, lines } = capturingLogger();
    const limiter = new CgroupLimiter(root, LIMITS, log);
    expect(limiter.apply('acme', process.pid)).toBe(false);
    expect(lines.map((l) => l.msg)).toEqual([
      'per-tenant OS limits (cgroup v2 memory.max / cpu.max) are unavailable here: the cgroup controllers ' +
        'memory, cpu are not enabled; tenants run with the Node heap limit only',
    ]);
  });

  it("writes each tenant's memory.max, cpu.max and cgroup.procs where cgroup v2 is writable", () => {
    const root = tempRoot();
    fs.writeFileSync(path.join(root, 'cgroup.controllers'), 'cpuset cpu io memory pids\n');
    const { log, lines } = capturingLogger();
    const limiter = new CgroupLimiter(root, LIMITS, log);
    expect(limiter.enabled).toBe(true);
    expect(fs.readFileSync(path.join(root, 'cgroup.subtree_control'), 'utf8')).toBe('+memory +cpu');
    expect(fs.readFileSync(path.join(root, 'rookery', 'cgroup.subtree_control'), 'utf8')).toBe(
      '+memory +cpu',
    );

    expect(limiter.apply('acme', 4242)).toBe(true);
    const group = path.join(root, 'rookery', 'acme');
    expect(fs.readFileSync(path.join(group, 'memory.max'), 'utf8')).toBe(String(256 * 1024 * 1024));
    expect(fs.readFileSync(path.join(group, 'cpu.max'), 'utf8')).toBe('50000 100000');
    expect(fs.readFileSync(path.join(group, 'cgroup.procs'), 'utf8')).toBe('4242');
    expect(lines).toEqual([]);
  });
});
