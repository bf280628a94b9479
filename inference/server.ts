/**
 * The inference service's internal endpoint as a plain node:http handler,
 * so it mounts on any server (the inference role's own, or behind Koa with
 * `ctx.respond = false`). Audio is written with back-pressure, and a client
 * that disconnects aborts the engine at once.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { SpeechEngine } from '../core/ports/engine.ts';
import { EngineUnavailableError } from '../core/ports/engine.ts';
import { isAbortError } from '../core/speechkit/abort.ts';
import { HEALTH_PATH, SYNTHESIZE_PATH, parseWireRequest } from './engines/wire.ts';
import { closeWhenConnectionDrops } from '../core/http/queued-response.ts';

/** Resolves true when the request was one of ours and has been answered. */
export type InferenceHandler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

export interface InferenceHandlerOptions {
  /** request bodies above this are refused with 413 (default 1 MiB: 50000 characters fit many times) */
  maxBodyBytes?: number;
  /** called with failures that happen after audio started, which the client only sees as a cut stream */
  onError?: (err: unknown) => void;
}

class HttpFailure extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

async function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of req as AsyncIterable<Buffer>) {
    size += part.length;
    if (size > limit) throw new HttpFailure(413, `body exceeds ${limit} bytes`);
    parts.push(part);
  }
  try {
    return JSON.parse(Buffer.concat(parts).toString('utf8'));
  } catch {
    throw new HttpFailure(400, 'body is not valid JSON');
  }
}

function sendJson(res: ServerResponse, status: number, body: Record<string, unknown>): void {
  res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
  res.end(JSON.stringify(body));
}

function statusFor(err: unknown): number {
  if (err instanceof HttpFailure) return err.status;
  if (err instanceof EngineUnavailableError) return 503;
  if (err instanceof RangeError) return 400;
  return 500;
}

/** Waits for 'drain', or gives up when the socket closes first. */
async function drained(res: ServerResponse): Promise<void> {
  const ac = new AbortController();
  await Promise.race([once(res, 'drain', { signal: ac.signal }), once(res, 'close', { signal: ac.signal })]).catch(() => undefined);
  ac.abort();
}

async function streamSynthesis(engine: SpeechEngine, req: IncomingMessage, res: ServerResponse, options: InferenceHandlerOptions): Promise<void> {
  const parsed = parseWireRequest(await readJson(req, options.maxBodyBytes ?? 1 << 20));
  if (typeof parsed === 'string') throw new HttpFailure(400, parsed);
  const controller = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) controller.abort(new Error('client disconnected'));
  };
  res.on('close', onClose);
  try {
    for await (const chunk of engine.synthesize({ ...parsed, signal: controller.signal })) {
      if (!res.headersSent) {
        res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'X-Sample-Rate': String(chunk.sampleRate), 'Cache-Control': 'no-store' });
      }
      if (!res.write(chunk.pcm)) await drained(res);
      if (controller.signal.aborted) return;
    }
    if (!res.headersSent) res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'X-Sample-Rate': String(parsed.sampleRate) });
    res.end();
  } catch (err) {
    if (controller.signal.aborted && isAbortError(err)) return;
    if (!res.headersSent) throw err;
    options.onError?.(err);
    // Headers are gone: cutting the connection without the final chunk is the only way to say "failed".
    res.destroy(err as Error);
  } finally {
    res.off('close', onClose);
  }
}

export function createInferenceHandler(engine: SpeechEngine, options: InferenceHandlerOptions = {}): InferenceHandler {
  return async (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== SYNTHESIZE_PATH && path !== HEALTH_PATH) return false;
    // A pipelined request's response whose connection drops must still close, or its engine runs on.
    closeWhenConnectionDrops(req, res);
    try {
      if (path === HEALTH_PATH) {
        if (req.method !== 'GET') throw new HttpFailure(405, 'use GET');
        await engine.ping();
        sendJson(res, 200, { status: 'ok', engine: engine.name });
      } else {
        if (req.method !== 'POST') throw new HttpFailure(405, 'use POST');
        await streamSynthesis(engine, req, res, options);
      }
    } catch (err) {
      if (res.headersSent || res.destroyed) return true;
      const status = statusFor(err);
      sendJson(res, status, { statusCode: status, message: (err as Error).message });
    }
    return true;
  };
}

/** A standalone server for the inference role: our routes, 404 for anything else. */
export function createInferenceServer(engine: SpeechEngine, options: InferenceHandlerOptions = {}): Server {
  const handle = createInferenceHandler(engine, options);
  return createServer((req, res) => {
    void handle(req, res).then((handled) => {
      if (!handled) sendJson(res, 404, { statusCode: 404, message: 'Not found' });
    });
  });
}
