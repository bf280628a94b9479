/**
 * Checkpoints of the embedded file's WAL on a thread of their own. By
 * default SQLite checkpoints inside the commit that fills the WAL, so every
 * ~40 MB one `POST /tts` commit copied the WAL into the file and waited on
 * its fsync on the event loop (about 8% of the accept rate; README,
 * Performance). Here the serving connection never checkpoints: a thread
 * with its own connection does, and if the thread cannot run, the
 * connection checkpoints inline as before.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { INLINE_AUTOCHECKPOINT_PAGES, type EmbeddedDb } from './embedded-db.ts';

const DEFAULT_INTERVAL_MS = 1_000;
/** The WAL starts over once it holds this many frames (~16 MB). */
const RESTART_FRAMES = 4_000;
const RESTART_ATTEMPTS = 10;

const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
// No busy timeout: a checkpoint that cannot have a lock gives up at once.
// Waiting with the write lock held (a RESTART waiting for a long /usage read)
// would hold every write of the event loop that long.
db.pragma('busy_timeout = 0');
const checkpoint = (mode) => db.pragma('wal_checkpoint(' + mode + ')')[0];
const pause = new Int32Array(new SharedArrayBuffer(4));
// PASSIVE copies the frames no reader needs, beside the writer, which goes on
// appending, so it never ends level with the WAL, and only a checkpoint that
// does lets the WAL start over. RESTART gets there by holding the write lock
// for the last few frames (a few ms); it needs a pause between the writer's
// commits, so it is tried again 2 ms later, a few times a tick.
const tick = () => {
  let result = checkpoint('PASSIVE');
  if (result.log < workerData.restartFrames) return result;
  for (let attempt = 0; attempt < workerData.restartAttempts; attempt++) {
    result = checkpoint('RESTART');
    if (!result.busy) return result;
    Atomics.wait(pause, 0, 0, 2);
  }
  return result;
};
// A checkpoint the file cannot take (a full or failing disk) is tried again
// next tick, the WAL growing meanwhile: the thread used to die of it, and
// every checkpoint ran on the event loop again until the next restart.
let failing = false;
const timer = setInterval(() => {
  let result;
  try {
    result = tick();
  } catch (error) {
    if (!failing) parentPort.postMessage({ failed: { code: error && error.code, message: String(error && error.message || error) } });
    failing = true;
    return;
  }
  if (failing) parentPort.postMessage({ recovered: true });
  failing = false;
  if (workerData.report) parentPort.postMessage({ result });
}, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  checkpoint('PASSIVE');
  db.close();
  parentPort.postMessage({ stopped: true });
});
parentPort.postMessage({ ready: true });
`;

export interface CheckpointResult {
  /** 1 when the checkpoint could not start (another one ran) */
  busy: number;
  /** frames in the WAL */
  log: number;
  /** frames copied into the file so far */
  checkpointed: number;
}

export interface WalCheckpointer {
  /** resolves once the thread has opened the file and taken over; false if it could not */
  ready: Promise<boolean>;
  /** one last checkpoint on the thread, then it closes its connection; the caller closes the file after */
  stop(): Promise<void>;
}

export interface CheckpointerOptions {
  intervalMs?: number;
  /** frames in the WAL from which a checkpoint also starts it over */
  restartFrames?: number;
  /** told when the thread stops on its own: the connection then checkpoints inline again */
  onFallback?: (err: Error) => void;
  /** told when checkpoints start failing (the thread tries again every tick), and with null once one succeeds again */
  onFailing?: (err: Error | null) => void;
  /** each checkpoint's result (tests) */
  onCheckpoint?: (result: CheckpointResult) => void;
}

export function checkpointInBackground(db: EmbeddedDb, options: CheckpointerOptions = {}): WalCheckpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(THREAD_SOURCE, {
    eval: true,
    workerData: { file: db.name, driver, intervalMs: options.intervalMs ?? DEFAULT_INTERVAL_MS, restartFrames: options.restartFrames ?? RESTART_FRAMES, restartAttempts: RESTART_ATTEMPTS, report: Boolean(options.onCheckpoint) },
  });
  worker.unref();
  let stopping = false;
  let settleReady: (ok: boolean) => void = () => {};
  const ready = new Promise<boolean>((resolve) => { settleReady = resolve; });
  let stopped: () => void = () => {};
  const done = new Promise<void>((resolve) => { stopped = resolve; });

  let fellBack = false;
  const fallBack = (err: Error) => {
    settleReady(false);
    stopped();
    if (stopping || fellBack || !db.open) return;
    fellBack = true;
    db.pragma(`wal_autocheckpoint = ${INLINE_AUTOCHECKPOINT_PAGES}`);
    options.onFallback?.(err);
  };
  worker.on('message', (message: { ready?: true; stopped?: true; result?: CheckpointResult; failed?: { code?: string; message: string }; recovered?: true }) => {
    if (message.ready) {
      // The thread has the file open: from now on the serving connection leaves checkpoints to it.
      if (!stopping) db.pragma('wal_autocheckpoint = 0');
      settleReady(true);
    } else if (message.stopped) {
      stopped();
    } else if (message.result) {
      options.onCheckpoint?.(message.result);
    } else if (message.failed) {
      options.onFailing?.(Object.assign(new Error(message.failed.message), { code: message.failed.code }));
    } else if (message.recovered) {
      options.onFailing?.(null);
    }
  });
  worker.on('error', fallBack);
  worker.on('exit', (code) => fallBack(new Error(`the WAL checkpoint thread exited with ${code}`)));

  return {
    ready,
    async stop() {
      if (stopping) return done;
      stopping = true;
      if (db.open) db.pragma(`wal_autocheckpoint = ${INLINE_AUTOCHECKPOINT_PAGES}`);
      worker.postMessage('stop');
      const timer = setTimeout(() => void worker.terminate(), 5_000);
      await done;
      clearTimeout(timer);
      await worker.terminate();
    },
  };
}
