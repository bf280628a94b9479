/** Public surface of audio encoding (audiobook mastering lives in plugins/audiobooks/mastering). */
export * from './formats.ts';
export { lameStream, lameArgs, lameBinary } from './lame.ts';
export { findExecutable } from './binaries.ts';
export { encoderAvailability, canEncode, probeEncoders, requireFfmpeg, EncoderUnavailableError, type EncoderAvailability } from './ffmpeg.ts';
export { encodeStream, encodeBuffer, collectStream, type EncodeOptions } from './encode.ts';
export { wavHeader, wavFile, parseWavHeader, wavData, WAV_HEADER_BYTES, STREAMING_DATA_BYTES, WavFormatError, type WavInfo } from './wav.ts';
export { encodeMulaw, decodeMulaw } from './mulaw.ts';
export { Resampler, resamplePcm, qualityFor } from './resample.ts';
export { floatToPcm16, pcm16ToFloat, silence, pcmDurationSeconds, peakLevel, rmsLevel, SampleAligner } from './pcm.ts';
