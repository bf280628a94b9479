/**
 * The Speex resampler (SpeexDSP, BSD) compiled to WASM, loaded once per
 * process: the SIMD build where the runtime has WASM SIMD (Node 16.4+),
 * the plain build otherwise. Only the few C functions the resampler calls
 * are typed here.
 */

export interface SpeexModule {
  HEAPU8: Uint8Array;
  HEAPU32: Uint32Array;
  _malloc(bytes: number): number;
  _free(ptr: number): void;
  _speex_resampler_init(channels: number, inRate: number, outRate: number, quality: number, errPtr: number): number;
  _speex_resampler_destroy(state: number): void;
  _speex_resampler_skip_zeros(state: number): number;
  _speex_resampler_get_input_latency(state: number): number;
  _speex_resampler_process_int(state: number, channel: number, inPtr: number, inLenPtr: number, outPtr: number, outLenPtr: number): number;
}

type Factory = (options?: object) => Promise<SpeexModule>;

async function load(): Promise<SpeexModule> {
  try {
    const simd = (await import('@echogarden/speex-resampler-wasm/simd')) as { default: Factory };
    return await simd.default();
  } catch {
    const plain = (await import('@echogarden/speex-resampler-wasm')) as { default: Factory };
    return plain.default();
  }
}

/** Resolved at import: every resampler after that is synchronous. */
export const speex: SpeexModule = await load();
