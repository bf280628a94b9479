/**
 * Client of the inference service (inference/server.ts). API workers use it
 * when INFERENCE_URL is set: same port, audio arrives as it is rendered, and
 * aborting closes the connection, which stops the engine on the far side.
 *
 * INFERENCE_URL may list several instances: requests take them in turn, and
 * one that cannot be reached or answers 503 before any audio is passed over
 * for the next (and set aside for a few seconds), so a dead instance costs
 * no request. Once audio flows there is no switching: a stream cut short is
 * a failed synthesis, as with one instance.
 */
import type { PcmChunk, SpeechEngine, SynthesisRequest } from '../../core/ports/engine.ts';
import { EngineUnavailableError } from '../../core/ports/engine.ts';
import { SampleAligner } from '../../core/speechkit/audio/pcm.ts';
import { Resampler } from '../../core/speechkit/audio/resample.ts';
import { abortError, linkedController } from '../../core/speechkit/abort.ts';
import { validateRequest } from './chunked.ts';
import { HEALTH_PATH, SAMPLE_RATE_HEADER, SYNTHESIZE_PATH, type WireRequest } from './wire.ts';

export interface RemoteEngineOptions {
  /** base address of the inference service, e.g. http://inference:8080, or of each of its instances */
  baseUrl: string | string[];
  /** how long to wait for the response headers, i.e. the first audio (default 30 s) */
  firstByteTimeoutMs?: number;
  /** how long an instance that could not be reached is tried only after the others (default 5 s) */
  setAsideMs?: number;
  fetch?: typeof fetch;
}

/** An instance could not take the request (unreachable, or 503 before any audio): another one may. */
class InstanceUnavailable extends EngineUnavailableError {}

async function errorMessage(res: Response): Promise<string> {
  const body = await res.text().catch(() => '');
  try {
    return (JSON.parse(body) as { message?: string }).message ?? body;
  } catch {
    return body.slice(0, 300);
  }
}

/** fetch() says only "fetch failed"; the reason (ECONNREFUSED, ...) is its cause. */
function causeOf(err: unknown): string {
  const error = err as Error & { cause?: { code?: string; message?: string } };
  const cause = error.cause?.code ?? error.cause?.message;
  return cause ? `${error.message} (${cause})` : error.message;
}

export class RemoteEngine implements SpeechEngine {
  readonly name = 'remote';
  private readonly bases: string[];
  private readonly firstByteTimeoutMs: number;
  private readonly setAsideMs: number;
  private readonly fetch: typeof fetch;
  /** round-robin position */
  private turn = 0;
  /** instance -> until when it is tried last */
  private readonly setAside = new Map<string, number>();

  constructor(options: RemoteEngineOptions) {
    const bases = (Array.isArray(options.baseUrl) ? options.baseUrl : [options.baseUrl]).map((url) => url.replace(/\/+$/, ''));
    if (bases.length === 0) throw new RangeError('RemoteEngine needs at least one inference service address');
    this.bases = bases;
    this.firstByteTimeoutMs = options.firstByteTimeoutMs ?? 30_000;
    this.setAsideMs = options.setAsideMs ?? 5000;
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  /** Every instance, the next in turn first and the ones set aside last. */
  private candidates(): string[] {
    const start = this.turn++ % this.bases.length;
    const ordered = [...this.bases.slice(start), ...this.bases.slice(0, start)];
    const now = Date.now();
    const healthy = ordered.filter((base) => (this.setAside.get(base) ?? 0) <= now);
    return [...healthy, ...ordered.filter((base) => !healthy.includes(base))];
  }

  private async open(request: SynthesisRequest, signal: AbortSignal): Promise<Response> {
    const problems: string[] = [];
    for (const base of this.candidates()) {
      try {
        const res = await this.openAt(base, request, signal);
        this.setAside.delete(base);
        return res;
      } catch (err) {
        if (!(err instanceof InstanceUnavailable)) throw err;
        this.setAside.set(base, Date.now() + this.setAsideMs);
        problems.push(err.message);
      }
    }
    throw new EngineUnavailableError(problems.join('; '));
  }

  private async openAt(base: string, request: SynthesisRequest, signal: AbortSignal): Promise<Response> {
    const body: WireRequest = { text: request.text, voice: request.voice, speed: request.speed, sampleRate: request.sampleRate };
    // The deadline covers the wait for the first audio only; the fetch signal also governs the
    // body, so the timer is cleared once headers arrive or long renders would be cut off.
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), this.firstByteTimeoutMs);
    let res: Response;
    try {
      res = await this.fetch(`${base}${SYNTHESIZE_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.any([signal, deadline.signal]),
      });
    } catch (err) {
      if (request.signal?.aborted) throw abortError(request.signal);
      // No audio within the deadline: the caller has waited its fill; another instance would double the wait.
      if (deadline.signal.aborted) throw new EngineUnavailableError(`inference service at ${base} unavailable: no audio within ${this.firstByteTimeoutMs} ms`);
      throw new InstanceUnavailable(`inference service at ${base} unavailable: ${causeOf(err)}`);
    } finally {
      clearTimeout(timer);
    }
    if (res.status === 503) throw new InstanceUnavailable(`inference service at ${base}: ${await errorMessage(res)}`);
    if (res.status === 400) throw new RangeError(`inference service refused the request: ${await errorMessage(res)}`);
    if (!res.ok || !res.body) throw new Error(`inference service answered ${res.status}: ${await errorMessage(res)}`);
    return res;
  }

  async *synthesize(request: SynthesisRequest): AsyncGenerator<PcmChunk> {
    validateRequest(request);
    // Aborted in `finally` too: a consumer that stops early must close the connection.
    const controller = linkedController(request.signal);
    let resampler: Resampler | null = null;
    try {
      const res = await this.open(request, controller.signal);
      const rate = Number(res.headers.get(SAMPLE_RATE_HEADER)) || request.sampleRate;
      resampler = rate === request.sampleRate ? null : new Resampler(rate, request.sampleRate);
      const aligner = new SampleAligner();
      try {
        for await (const part of res.body! as AsyncIterable<Uint8Array>) {
          const aligned = aligner.push(Buffer.from(part.buffer, part.byteOffset, part.byteLength));
          const pcm = resampler ? resampler.push(aligned) : aligned;
          if (pcm.length > 0) yield { pcm, sampleRate: request.sampleRate };
        }
      } catch (err) {
        if (request.signal?.aborted) throw abortError(request.signal);
        throw new Error(`inference stream cut short: ${(err as Error).message}`, { cause: err });
      }
      const tail = resampler?.flush();
      if (tail && tail.length > 0) yield { pcm: tail, sampleRate: request.sampleRate };
    } finally {
      resampler?.close();
      controller.abort();
    }
  }

  /** Healthy when any instance is: requests pass the others over. */
  async ping(): Promise<void> {
    const results = await Promise.allSettled(this.bases.map((base) => this.pingAt(base)));
    if (results.some((r) => r.status === 'fulfilled')) return;
    throw new EngineUnavailableError(results.map((r) => ((r as PromiseRejectedResult).reason as Error).message).join('; '));
  }

  private async pingAt(base: string): Promise<void> {
    let res: Response;
    try {
      res = await this.fetch(`${base}${HEALTH_PATH}`, { signal: AbortSignal.timeout(5000) });
    } catch (err) {
      throw new EngineUnavailableError(`inference service at ${base} unreachable: ${causeOf(err)}`);
    }
    if (!res.ok) throw new EngineUnavailableError(`inference service at ${base} unhealthy (${res.status}): ${await errorMessage(res)}`);
    await res.body?.cancel();
  }

  async close(): Promise<void> {
    // Connections belong to the global dispatcher; each stream closes its own in `finally`.
  }
}
