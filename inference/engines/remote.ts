/**
 * Client of the inference service (inference/server.ts). API workers use it
 * when INFERENCE_URL is set: same port, audio arrives as it is rendered, and
 * aborting closes the connection, which stops the engine on the far side.
 */
import type { PcmChunk, SpeechEngine, SynthesisRequest } from '../../core/ports/engine.ts';
import { EngineUnavailableError } from '../../core/ports/engine.ts';
import { SampleAligner } from '../../core/speechkit/audio/pcm.ts';
import { Resampler } from '../../core/speechkit/audio/resample.ts';
import { abortError, linkedController } from '../../core/speechkit/abort.ts';
import { validateRequest } from './chunked.ts';
import { HEALTH_PATH, SAMPLE_RATE_HEADER, SYNTHESIZE_PATH, type WireRequest } from './wire.ts';

export interface RemoteEngineOptions {
  /** base address of the inference service, e.g. http://inference:8080 */
  baseUrl: string;
  /** how long to wait for the response headers, i.e. the first audio (default 30 s) */
  firstByteTimeoutMs?: number;
  fetch?: typeof fetch;
}

async function errorMessage(res: Response): Promise<string> {
  const body = await res.text().catch(() => '');
  try {
    return (JSON.parse(body) as { message?: string }).message ?? body;
  } catch {
    return body.slice(0, 300);
  }
}

export class RemoteEngine implements SpeechEngine {
  readonly name = 'remote';
  private readonly base: string;
  private readonly firstByteTimeoutMs: number;
  private readonly fetch: typeof fetch;

  constructor(options: RemoteEngineOptions) {
    this.base = options.baseUrl.replace(/\/+$/, '');
    this.firstByteTimeoutMs = options.firstByteTimeoutMs ?? 30_000;
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  private async open(request: SynthesisRequest, signal: AbortSignal): Promise<Response> {
    const body: WireRequest = { text: request.text, voice: request.voice, speed: request.speed, sampleRate: request.sampleRate };
    // The deadline covers the wait for the first audio only; the fetch signal also governs the
    // body, so the timer is cleared once headers arrive or long renders would be cut off.
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), this.firstByteTimeoutMs);
    let res: Response;
    try {
      res = await this.fetch(`${this.base}${SYNTHESIZE_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.any([signal, deadline.signal]),
      });
    } catch (err) {
      if (request.signal?.aborted) throw abortError(request.signal);
      const why = deadline.signal.aborted ? `no audio within ${this.firstByteTimeoutMs} ms` : (err as Error).message;
      throw new EngineUnavailableError(`inference service at ${this.base} unavailable: ${why}`);
    } finally {
      clearTimeout(timer);
    }
    if (res.status === 503) throw new EngineUnavailableError(`inference service: ${await errorMessage(res)}`);
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

  async ping(): Promise<void> {
    let res: Response;
    try {
      res = await this.fetch(`${this.base}${HEALTH_PATH}`, { signal: AbortSignal.timeout(5000) });
    } catch (err) {
      throw new EngineUnavailableError(`inference service at ${this.base} unreachable: ${(err as Error).message}`);
    }
    if (!res.ok) throw new EngineUnavailableError(`inference service unhealthy (${res.status}): ${await errorMessage(res)}`);
    await res.body?.cancel();
  }

  async close(): Promise<void> {
    // Connections belong to the global dispatcher; each stream closes its own in `finally`.
  }
}
