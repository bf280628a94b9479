/**
 * What an ASR_MODEL directory holds, as sherpa-onnx releases ship them: a
 * Zipformer transducer (`encoder*.onnx`, `decoder*.onnx`, `joiner*.onnx`,
 * `tokens.txt`, e.g. sherpa-onnx-zipformer-vi-2025-04-20) or a Whisper export
 * (`<size>-encoder.onnx`, `<size>-decoder.onnx`, `<size>-tokens.txt`). Where
 * both int8 and float files exist the int8 ones are used (CPU speed).
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

export type ModelLayout =
  | { kind: 'transducer'; encoder: string; decoder: string; joiner: string; tokens: string }
  | { kind: 'whisper'; encoder: string; decoder: string; tokens: string };

export class ModelDirError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelDirError';
  }
}

function pick(files: string[], role: 'encoder' | 'decoder' | 'joiner'): string | null {
  const matches = files.filter((f) => f.endsWith('.onnx') && f.includes(role)).sort();
  return matches.find((f) => f.includes('int8')) ?? matches[0] ?? null;
}

export function detectModelLayout(dir: string): ModelLayout {
  let files: string[];
  try {
    if (!statSync(dir).isDirectory()) throw new ModelDirError(`ASR_MODEL: ${dir} is not a directory`);
    files = readdirSync(dir);
  } catch (err) {
    if (err instanceof ModelDirError) throw err;
    throw new ModelDirError(`ASR_MODEL: directory ${dir} does not exist or cannot be read`);
  }
  const at = (f: string) => path.join(dir, f);
  const encoder = pick(files, 'encoder');
  const decoder = pick(files, 'decoder');
  const joiner = pick(files, 'joiner');
  const tokens = files.includes('tokens.txt') ? 'tokens.txt' : files.find((f) => f.endsWith('-tokens.txt')) ?? null;
  if (encoder && decoder && joiner && tokens) {
    return { kind: 'transducer', encoder: at(encoder), decoder: at(decoder), joiner: at(joiner), tokens: at(tokens) };
  }
  if (encoder && decoder && tokens && !joiner) return { kind: 'whisper', encoder: at(encoder), decoder: at(decoder), tokens: at(tokens) };
  const missing = [!encoder && 'an encoder*.onnx', !decoder && 'a decoder*.onnx', !tokens && 'tokens.txt (or <name>-tokens.txt)'].filter(Boolean);
  throw new ModelDirError(
    `ASR_MODEL: ${dir} holds no speech model sherpa-onnx can load${missing.length ? `: missing ${missing.join(', ')}` : ''}. ` +
    'Expected a transducer (encoder*.onnx, decoder*.onnx, joiner*.onnx, tokens.txt) or a Whisper export (<size>-encoder.onnx, <size>-decoder.onnx, <size>-tokens.txt).',
  );
}
