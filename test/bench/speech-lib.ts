/**
 * Shared pieces of the speech-efficiency benchmarks: the 200-character text,
 * CPU time of a process and its reaped children read from /proc, raw HTTP
 * requests that time the first body byte, and the bare-engine baselines
 * (espeak-ng alone, and `espeak-ng | encoder`) run the way a user would run
 * them from a shell.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';

/** 200 characters of ordinary Vietnamese prose with a date and numbers (as in speech-ttfb). */
export const TEXT_200 =
  'Sáng nay, ngày 15 tháng 3, trời Hà Nội se lạnh và có mưa phùn nhẹ. Người dân đi làm sớm hơn thường lệ để tránh tắc đường, còn các quán phở ven Hồ Gươm đã đông khách từ lúc sáu giờ kém mười lăm phút.';
export const CHARS_200 = [...TEXT_200].length;
/** What the catalogue's default voice asks espeak-ng for (vi-north-female-mai). */
export const ESPEAK_ARGS = ['-v', 'vi+f3', '-s', '165', '-p', '55', '-b', '1', '--stdout'];

const TICK_MS = 1000 / 100; // USER_HZ is 100 on Linux

/**
 * CPU milliseconds of a process plus its children that have exited and been
 * reaped (utime, stime, cutime, cstime); with `childrenOnly`, the reaped
 * children alone (the bare engine, without the Node process that ran it).
 */
export function cpuMs(pid: number = process.pid, childrenOnly = false): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
  // fields[0] is field 3 (state); utime is field 14.
  const own = childrenOnly ? 0 : fields[11] + fields[12];
  return (own + fields[13] + fields[14]) * TICK_MS;
}

/**
 * CPU milliseconds of a process and every live descendant (each with its
 * own reaped children): the API's process-spawning helper lives as long as
 * the API, so its CPU never reaches the API's cutime.
 */
export function treeCpuMs(root: number): number {
  const parent = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // exited meanwhile
    }
  }
  const inTree = (pid: number): boolean => {
    for (let p: number | undefined = pid, hops = 0; p !== undefined && hops < 8; p = parent.get(p), hops++) if (p === root) return true;
    return false;
  };
  let total = 0;
  for (const pid of parent.keys()) {
    if (!inTree(pid)) continue;
    try {
      total += cpuMs(pid);
    } catch {
      // exited meanwhile: its CPU moved to its parent's cutime
    }
  }
  return total;
}

export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

export interface Timed {
  ttfbMs: number;
  totalMs: number;
  bytes: number;
  status: number;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** POSTs JSON and reads the whole body; the first body byte marks time to first byte. */
export function post(url: string, headers: Record<string, string>, body: unknown): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const payload = Buffer.from(JSON.stringify(body));
    const started = performance.now();
    const req = http.request(url, { method: 'POST', agent, headers: { ...headers, 'content-type': 'application/json', 'content-length': String(payload.length) } }, (res) => {
      let ttfbMs = 0;
      let bytes = 0;
      res.on('data', (d: Buffer) => {
        if (!ttfbMs) ttfbMs = performance.now() - started;
        bytes += d.length;
      });
      res.on('end', () => resolve({ ttfbMs, totalMs: performance.now() - started, bytes, status: res.statusCode ?? 0 }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** Runs a shell pipeline with the text on stdin; times its first stdout byte. */
export function runPipeline(command: string, text: string): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('sh', ['-c', command], { stdio: ['pipe', 'pipe', 'inherit'] });
    let ttfbMs = 0;
    let bytes = 0;
    child.stdout.on('data', (d: Buffer) => {
      if (!ttfbMs) ttfbMs = performance.now() - started;
      bytes += d.length;
    });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve({ ttfbMs, totalMs: performance.now() - started, bytes, status: 0 }) : reject(new Error(`${command} exited ${code}`))));
    child.stdin.end(text);
  });
}

/** Bare espeak-ng run directly (no shell), text on stdin, WAV on stdout. */
export function runEspeak(text: string): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('espeak-ng', [...ESPEAK_ARGS, '--stdin'], { stdio: ['pipe', 'pipe', 'inherit'] });
    let ttfbMs = 0;
    let bytes = 0;
    child.stdout.on('data', (d: Buffer) => {
      if (!ttfbMs) ttfbMs = performance.now() - started;
      bytes += d.length;
    });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve({ ttfbMs, totalMs: performance.now() - started, bytes, status: 0 }) : reject(new Error(`espeak-ng exited ${code}`))));
    child.stdin.end(text);
  });
}

/**
 * Waits (up to 5 s) until a server's process tree has spent at most one
 * clock tick in 200 ms. A CPU figure starts and ends on a settled server:
 * the work a phase leaves behind (saved copies written after the last mp3)
 * counts in that phase, not in the next.
 */
export async function settle(pid: number): Promise<void> {
  const until = performance.now() + 5000;
  let last = treeCpuMs(pid);
  while (performance.now() < until) {
    await new Promise((r) => setTimeout(r, 200));
    const now = treeCpuMs(pid);
    if (now - last <= TICK_MS) return;
    last = now;
  }
}

/** Sequential runs: CPU per run read from `pid` (this process, `childrenOnly`, when it spawns the work itself). */
export async function cpuPerRun(runs: number, pid: number, one: () => Promise<Timed>, childrenOnly = false): Promise<{ cpuMs: number; ttfb: number[] }> {
  // The API server's tree (helper included); this process alone when it runs the work itself.
  const read = () => (pid === process.pid ? cpuMs(pid, childrenOnly) : treeCpuMs(pid));
  if (pid !== process.pid) await settle(pid);
  const before = read();
  const ttfb: number[] = [];
  for (let i = 0; i < runs; i++) ttfb.push((await one()).ttfbMs);
  // Let the last child be reaped into cutime; a server's own trailing work (saved copies, outcome events) is part of its figure.
  await new Promise((r) => setTimeout(r, 50));
  if (pid !== process.pid) await settle(pid);
  return { cpuMs: (read() - before) / runs, ttfb };
}

/** `concurrency` loops for `seconds`; characters per second of completed runs. */
export async function throughput(concurrency: number, seconds: number, chars: number, one: () => Promise<Timed>): Promise<{ charsPerSecond: number; failures: number }> {
  const until = performance.now() + seconds * 1000;
  let done = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < until) {
      const r = await one().catch(() => null);
      if (r && (r.status === 0 || r.status === 200) && r.bytes > 0) done++;
      else failures++;
    }
  }));
  return { charsPerSecond: (done * chars) / ((performance.now() - started) / 1000), failures };
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

export const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

export interface Verdict {
  name: string;
  measured: string;
  baseline: string;
  target: string;
  ok: boolean;
}

/** Prints one line per target and returns true when all were met. */
export function report(verdicts: Verdict[]): boolean {
  console.log('\n| target | this API | same-run baseline | goal | result |\n|---|---|---|---|---|');
  for (const v of verdicts) console.log(`| ${v.name} | ${v.measured} | ${v.baseline} | ${v.target} | ${v.ok ? 'PASS' : 'MISS'} |`);
  return verdicts.every((v) => v.ok);
}
