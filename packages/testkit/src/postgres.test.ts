import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { findPostgresBin, startPostgres } from './postgres.js';

const run = promisify(execFile);

describe('startPostgres', () => {
  it('starts a real server that answers on its TCP port, and stop() removes it', async () => {
    const server = await startPostgres();
    let stopped = false;
    try {
      const psql = path.join(findPostgresBin()!, 'psql');
      const { stdout } = await run(psql, [
        server.connectionString,
        '-At',
        '-c',
        'select current_setting($$fsync$$) || $$ $$ || current_setting($$server_version_num$$)::int / 10000',
      ]);
      const [fsync, major] = stdout.trim().split(' ');
      expect(fsync).toBe('off');
      expect(Number(major)).toBeGreaterThanOrEqual(12);
      expect(fs.existsSync(path.join(server.socketDir, `.s.PGSQL.${server.port}`))).toBe(true);
      await server.stop();
      stopped = true;
      expect(fs.existsSync(server.socketDir)).toBe(false);
      await expect(run(psql, [server.connectionString, '-At', '-c', 'select 1'])).rejects.toThrow();
    } finally {
      if (!stopped) await server.stop();
    }
  });

  it("durable: true keeps PostgreSQL's flushes on (fsync, synchronous_commit, full_page_writes), also after start()", async () => {
    const server = await startPostgres({ durable: true });
    try {
      const psql = path.join(findPostgresBin()!, 'psql');
      const settings = async () =>
        (
          await run(psql, [
            server.connectionString,
            '-At',
            '-c',
            "select string_agg(current_setting(name), ' ') from unnest(array['fsync', 'synchronous_commit', 'full_page_writes']) as name",
          ])
        ).stdout.trim();
      expect(await settings()).toBe('on on on');
      await server.shutDown();
      await server.start();
      expect(await settings()).toBe('on on on');
    } finally {
      await server.stop();
    }
  });

  it('shutDown() takes the server down with its data kept, start() brings it back on the same port', async () => {
    const server = await startPostgres();
    try {
      const psql = path.join(findPostgresBin()!, 'psql');
      const sql = (command: string) => run(psql, [server.connectionString, '-At', '-c', command]);
      await sql('create table kept (n int); insert into kept values (42)');
      await server.shutDown();
      await expect(sql('select 1')).rejects.toThrow();
      await server.start();
      expect((await sql('select n from kept')).stdout.trim()).toBe('42');
    } finally {
      await server.stop();
    }
  });
});
