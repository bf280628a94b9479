/**
 * Why the tests run mongo-java-server and not FerretDB (README, "Servers the
 * tests start"): builds FerretDB 1.x (main.go, SQLite backend) with Go from
 * the module proxy, starts it and mongo-java-server, and asks both the
 * question the ledger depends on: are conditional updates atomic?
 *
 *   npx tsx test/servers/ferretdb/probe.ts
 *
 * Twenty concurrent `findOneAndUpdate({bal: {$gte: 100}}, {$inc: {bal: -100}})`
 * on a balance of 1,000 must succeed exactly ten times and leave 0; twenty
 * compare-and-set increments must leave 20. Prints one line per server.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MongoClient } from 'mongodb';
import { startMongo } from '../../helpers/servers/mongo.ts';

const dir = path.dirname(fileURLToPath(import.meta.url));
const binary = path.join(dir, 'target', 'ferretdb-test-server');

async function probe(url: string): Promise<string> {
  const client = await MongoClient.connect(url, { maxPoolSize: 20 });
  try {
    const col = client.db('probe').collection<{ _id: string; n: number; bal: number }>('atomicity');
    await col.deleteMany({});
    await col.insertOne({ _id: 'a', n: 0, bal: 1000 });
    let debits = 0;
    await Promise.all(Array.from({ length: 20 }, async () => {
      if (await col.findOneAndUpdate({ _id: 'a', bal: { $gte: 100 } }, { $inc: { bal: -100 } })) debits += 1;
    }));
    await Promise.all(Array.from({ length: 20 }, async () => {
      for (;;) {
        const doc = await col.findOne({ _id: 'a' });
        if ((await col.updateOne({ _id: 'a', n: doc!.n }, { $set: { n: doc!.n + 1 } })).modifiedCount === 1) return;
      }
    }));
    const end = (await col.findOne({ _id: 'a' }))!;
    const atomic = debits === 10 && end.bal === 0 && end.n === 20;
    return `${atomic ? 'atomic' : 'NOT ATOMIC'}: ${debits} of 20 debits acknowledged, balance ${end.bal} (expected 10 and 0); 20 compare-and-set increments left ${end.n}`;
  } finally {
    await client.close();
  }
}

const build = spawnSync('go', ['build', '-o', binary, '.'], { cwd: dir, stdio: 'inherit' });
if (build.status !== 0) throw new Error('go build of FerretDB failed');
const data = mkdtempSync(path.join(os.tmpdir(), 'ferretdb-'));
const ferret = spawn(binary, ['127.0.0.1:0', data], { stdio: ['pipe', 'pipe', 'inherit'] });
const mongo = await startMongo();
try {
  const ferretUrl = await new Promise<string>((resolve, reject) => {
    ferret.stdout!.on('data', (chunk: Buffer) => {
      const match = /listening (\S+)/.exec(chunk.toString());
      if (match) resolve(`${match[1]}?directConnection=true`);
    });
    ferret.once('exit', (code) => reject(new Error(`FerretDB exited with ${code}`)));
  });
  console.log(`FerretDB 1.24.2 (SQLite backend): ${await probe(ferretUrl)}`);
  console.log(`${mongo.version}: ${await probe(mongo.url)}`);
} finally {
  ferret.stdin!.end();
  await mongo.stop();
  rmSync(data, { recursive: true, force: true });
}
