import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openEmbeddedDb } from '../../core/adapters/embedded-db.ts';
import { createLocalBus } from '../../core/adapters/bus/local.ts';
import type { BusMessage } from '../../core/ports/bus.ts';

/**
 * The embedded bus on a file that cannot grow (SQLite's max_page_count gives
 * the same SQLITE_FULL as a full disk): a publish waits for room instead of
 * failing, up to publishTimeoutMs, and only so many messages wait at once.
 */
function fullFile(t: { teardown(fn: () => void): void }) {
  const dir = mkdtempSync(path.join(tmpdir(), 'local-bus-full-'));
  const db = openEmbeddedDb(dir);
  const bus = createLocalBus(db, { pollMs: 20, partitions: 1, onError: () => {} });
  t.teardown(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const pages = () => db.pragma('page_count', { simple: true }) as number;
  return { db, bus, freeze: () => db.pragma(`max_page_count = ${pages()}`), thaw: () => db.pragma('max_page_count = 1073741823') };
}

const batch = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => ({ id: `${prefix}${i}`, key: 'k', value: { text: 'x'.repeat(200) } }));

test('a publish the full file refuses waits and lands once there is room, once', async (t) => {
  const { bus, freeze, thaw } = fullFile(t);
  await bus.publish('t', batch(1, 'warm'));
  freeze();
  let landed = false;
  const publishing = bus.publish('t', batch(200, 'm')).then(() => { landed = true; });
  await new Promise((r) => setTimeout(r, 600));
  t.false(landed, 'still waiting while the file cannot grow');
  thaw();
  await publishing;
  const seen: BusMessage[] = [];
  const sub = await bus.subscribe({ topic: 't', group: 'g', handler: async (m) => void seen.push(m) });
  const until = Date.now() + 5000;
  while (seen.length < 201 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  await sub.stop();
  t.is(seen.length, 201);
  t.is(new Set(seen.map((m) => m.id)).size, 201, 'nothing appended twice');
});

test('at most 10,000 messages wait for room: a publish beyond that fails at once, as it did before', async (t) => {
  const { bus, freeze, thaw } = fullFile(t);
  freeze();
  const waiting = bus.publish('t', batch(10_000, 'a'));
  await new Promise((r) => setTimeout(r, 100));
  const refused = await t.throwsAsync(bus.publish('t', batch(50, 'b')), { any: true });
  t.is((refused as { code?: string }).code, 'SQLITE_FULL');
  thaw();
  await waiting;
  await bus.publish('t', batch(1, 'c'));
  t.pass();
});

test('a publish that still cannot land after publishTimeoutMs fails with the file\'s error', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'local-bus-full-'));
  const db = openEmbeddedDb(dir);
  t.teardown(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const bus = createLocalBus(db, { partitions: 1, publishTimeoutMs: 700, onError: () => {} });
  db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
  const started = Date.now();
  const err = await t.throwsAsync(bus.publish('t', batch(50, 'm')), { any: true });
  t.is((err as { code?: string }).code, 'SQLITE_FULL');
  t.true(Date.now() - started >= 250, 'it was tried again first');
});
