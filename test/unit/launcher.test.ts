import test from 'ava';
import { readFileSync } from 'node:fs';
import { startChild, spawnHere, type ChildRun } from '../../core/speechkit/launcher.ts';
import { siblingModule } from '../../core/speechkit/module-url.ts';

/** The parent pid of a process, from /proc (Linux). */
function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

async function output(run: ChildRun): Promise<string> {
  let text = '';
  for await (const chunk of run.stdout) text += String(chunk);
  return text;
}

/** Starts children until one comes from the helper (the first ones are spawned here while it loads). */
async function fromHelper(command: string, args: string[]): Promise<ChildRun> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const run = await startChild('sh', ['-c', 'echo $PPID']);
    const ppid = Number((await output(run)).trim());
    await run.exited;
    if (ppid !== process.pid) return startChild(command, args);
    if (Date.now() > deadline) throw new Error('the launcher helper never came up');
    await new Promise((r) => setTimeout(r, 50));
  }
}

test.serial('children come from the small helper process once it is up, not from this process; stdin and stdout are one connection to it', async (t) => {
  const run = await fromHelper('sh', ['-c', 'echo $PPID; cat']);
  run.stdin.end('through the helper\n');
  const [ppid, echoed] = (await output(run)).trim().split('\n');
  t.not(Number(ppid), process.pid, 'forked by the helper');
  t.is(parentOf(Number(ppid)), process.pid, 'the helper is this process\'s child');
  t.is(echoed, 'through the helper');
  t.deepEqual(await run.exited, { code: 0, signal: null });
  t.false(run.running());
});

test.serial('exit status and the start of stderr come back; an unknown command fails as ENOENT with empty output', async (t) => {
  const run = await fromHelper('sh', ['-c', 'echo oops >&2; exit 3']);
  run.stdin.end();
  t.is(await output(run), '');
  t.deepEqual(await run.exited, { code: 3, signal: null });
  t.is(run.stderr(), 'oops\n');

  const missing = await startChild('/nonexistent/espeak-ng', []);
  missing.stdin.end('text');
  t.is(await output(missing), '');
  const exit = await missing.exited;
  t.true(exit instanceof Error);
  t.is((exit as NodeJS.ErrnoException).code, 'ENOENT');
});

test.serial('children that write and exit at once, many at a time: every output arrives whole, none is read by the helper', async (t) => {
  await (await fromHelper('true', [])).exited;
  const runs = await Promise.all(Array.from({ length: 24 }, (_, i) => startChild('sh', ['-c', `echo run-${i}; exit ${i % 3}`])));
  const outputs = await Promise.all(runs.map(output));
  t.deepEqual(outputs, runs.map((_, i) => `run-${i}\n`));
  t.deepEqual(await Promise.all(runs.map((r) => r.exited)), runs.map((_, i) => ({ code: i % 3, signal: null })));
});

test.serial('kill stops a child that is still reading its stdin, reported as SIGKILL', async (t) => {
  const run = await fromHelper('sleep', ['30']);
  t.true(run.running());
  // Input it never read: its end of the connection closes with data pending, which resets ours.
  run.stdin.write('never read\n');
  run.kill();
  t.is(await output(run), '', 'the output ends; it does not fail');
  t.deepEqual(await run.exited, { code: null, signal: 'SIGKILL' });
});

test.serial('when the helper dies, the children it started end with an error and later starts still run (here, then through a new helper)', async (t) => {
  const run = await fromHelper('sh', ['-c', 'echo $PPID; exec cat']);
  let first = '';
  for await (const chunk of run.stdout) {
    first += String(chunk);
    if (first.includes('\n')) break;
  }
  const helper = Number(first.trim());
  process.kill(helper, 'SIGKILL');
  const exit = await run.exited;
  t.true(exit instanceof Error, 'the run it had started fails');
  const next = await startChild('sh', ['-c', 'echo alive']);
  t.is(await output(next), 'alive\n');
  t.deepEqual(await next.exited, { code: 0, signal: null });
  const again = await fromHelper('sh', ['-c', 'echo $PPID']);
  t.not(Number((await output(again)).trim()), helper, 'a new helper took over');
});

test('spawnHere runs the same contract in this process', async (t) => {
  const run = spawnHere('sh', ['-c', 'echo $PPID; cat; echo err >&2; exit 2']);
  run.stdin.end('here\n');
  const [ppid, echoed] = (await output(run)).trim().split('\n');
  t.is(Number(ppid), process.pid);
  t.is(echoed, 'here');
  t.deepEqual(await run.exited, { code: 2, signal: null });
  t.is(run.stderr(), 'err\n');
});

test('a module\'s siblings keep its extension: .ts from source, .js in the compiled build', (t) => {
  t.is(siblingModule('file:///app/core/speechkit/launcher.ts', 'launcher-process').href, 'file:///app/core/speechkit/launcher-process.ts');
  t.is(siblingModule('file:///app/dist/core/speechkit/launcher.js', 'launcher-process').href, 'file:///app/dist/core/speechkit/launcher-process.js');
});
