import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';

/**
 * Ties a server that cannot watch its own standard input (clickhouse-server,
 * redis-server) to this process, as the Java mains and the platform
 * processes (test/helpers/lifeline.ts) are: a small `sh` in a process group
 * of its own reads a pipe from this process, which nothing writes to. When
 * the pipe closes (this process exited, however abruptly: SIGKILL, or a
 * signal whose default action ends it without running 'exit' handlers) it
 * sends the server SIGTERM, then SIGKILL after `graceMs`. When the server
 * exits first, the watchdog is ended at once, so it never signals a pid
 * that has been reused. Resolves once the watchdog is gone (an owner that
 * awaits it leaves no zombie behind when it exits right after).
 */
const WATCHDOG = [
  'while read -r _; do :; done',
  'kill -TERM "$1" 2>/dev/null || exit 0',
  'i=0',
  'while kill -0 "$1" 2>/dev/null; do',
  '  i=$((i + 1)); if [ "$i" -gt "$2" ]; then kill -KILL "$1" 2>/dev/null; exit 0; fi',
  '  sleep 0.1',
  'done',
].join('\n');

export function tether(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  let watchdog: ChildProcess;
  try {
    watchdog = spawn('sh', ['-c', WATCHDOG, 'tether', String(child.pid), String(Math.ceil(graceMs / 100))], {
      stdio: ['pipe', 'ignore', 'ignore'],
      // Not in the caller's process group: a terminal's Ctrl-C must not end it before the server's owner stops the server.
      detached: true,
    });
  } catch {
    return Promise.resolve(); // no sh: the owner's 'exit' handler is the only tie, as before
  }
  const gone = new Promise<void>((resolve) => {
    watchdog.once('error', () => resolve());
    watchdog.once('exit', () => resolve());
  });
  watchdog.on('error', () => {});
  watchdog.stdin!.on('error', () => {});
  // Neither the watchdog nor its pipe keeps this process's event loop alive.
  watchdog.unref();
  (watchdog.stdin as unknown as Socket).unref?.();
  child.once('exit', () => {
    // Held until it is gone, so that an owner awaiting it does not see its event loop run dry first.
    watchdog.ref();
    watchdog.kill('SIGKILL');
    watchdog.stdin!.destroy();
  });
  return gone;
}
