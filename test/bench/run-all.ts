import { spawnSync } from 'node:child_process';

/** `npm run bench`: every benchmark in turn, each printing its own figures; exits 1 if any missed its target. */
const BENCHES = ['api-throughput', 'production-path', 'speech-cpu', 'speech-ttfb', 'usage-event-loop', 'text-prep', 'speech-isolation', 'usage-aggregator', 'usage-aggregator --bus=kafka', 'local-log', 'usage-query', 'webhook-dispatch', 'audiobook-plan'];
// The benches measure the compiled build, as `npm start` runs it (test/bench/lib.ts, serverArgs).
const build = spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
if (build.status !== 0) throw new Error('npm run build failed');
const missed: string[] = [];
for (const name of BENCHES) {
  console.log(`\n=== ${name}`);
  const [script, ...args] = name.split(' ');
  const run = spawnSync(process.execPath, ['--import=tsx', `test/bench/${script}.ts`, ...args], { stdio: 'inherit' });
  if (run.status !== 0) missed.push(name);
}
console.log(missed.length === 0 ? '\nall benchmarks met their targets' : `\nmissed or failed: ${missed.join(', ')}`);
process.exitCode = missed.length === 0 ? 0 : 1;
