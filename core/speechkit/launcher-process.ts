/**
 * The launcher's helper process (see launcher.ts): starts child processes
 * for its parent, so the fork happens here, in a small process, and not in
 * the API process, whose fork copies the page tables of its whole heap
 * (4 ms at 170 MB). For each start it connects to the parent's Unix socket,
 * writes the run's token, and gives that connection to the child as its
 * stdin and stdout; its own copy is closed at once. Nothing is handed over
 * on the IPC channel, which carries only small JSON messages.
 * Standalone on purpose: it imports nothing but Node and the protocol, so it
 * starts small; and nothing imports it (it sets up a process when loaded).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { MAX_STDERR, type LauncherReply, type LauncherRequest } from './launcher-protocol.ts';

const socketPath = process.argv[2]!;
const children = new Map<number, ChildProcess>();
/** kills asked for before the child was started */
const killed = new Set<number>();

function send(reply: LauncherReply): void {
  if (process.connected) process.send!(reply);
}

function start({ id, token, command, args }: Extract<LauncherRequest, { op: 'start' }>): void {
  const connection = connect(socketPath);
  connection.once('error', (err: NodeJS.ErrnoException) => send({ op: 'failed', id, error: err.code ?? err.message }));
  connection.once('connect', () => connection.write(token, () => {
    if (killed.delete(id)) {
      connection.destroy();
      send({ op: 'exit', id, code: null, signal: 'SIGKILL', stderr: '' });
      return;
    }
    // The connection is the child's stdin and stdout; Node stops reading it here once the child has it.
    const child = spawn(command, args, { stdio: [connection, connection, 'pipe'] });
    connection.destroy();
    if (child.pid === undefined) {
      child.once('error', (err: NodeJS.ErrnoException) => send({ op: 'failed', id, error: err.code ?? err.message }));
      return;
    }
    children.set(id, child);
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => {
      if (stderr.length < MAX_STDERR) stderr += d.toString();
    });
    child.once('close', (code, signal) => {
      children.delete(id);
      send({ op: 'exit', id, code, signal, stderr });
    });
    send({ op: 'started', id, pid: child.pid });
  }));
}

process.on('message', (request: LauncherRequest) => {
  if (request.op === 'start') start(request);
  else if (request.op === 'kill') {
    const child = children.get(request.id);
    if (child) child.kill('SIGKILL');
    else killed.add(request.id);
  }
});

// The parent has gone (exited, crashed or let go of us): nothing started here is wanted any more.
process.on('disconnect', () => {
  for (const child of children.values()) child.kill('SIGKILL');
  process.exit(0);
});

// A terminal's Ctrl-C reaches the whole process group: the parent drains its streams first, and lets go of us when it exits.
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => undefined);

send({ op: 'ready' });
