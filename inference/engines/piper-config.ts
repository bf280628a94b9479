/**
 * Reads a Piper/VITS voice directory: the model and its JSON config
 * (sample rate, phoneme-id map, speakers, inference scales). Validated here
 * so a broken voice fails at load with the file and field named.
 */
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';

export interface PiperVoiceConfig {
  sampleRate: number;
  phonemeIdMap: Record<string, number[]>;
  numSpeakers: number;
  speakerIdMap: Record<string, number>;
  noiseScale: number;
  lengthScale: number;
  noiseW: number;
  /** espeak-ng voice used to phonemise (config `espeak.voice`, default `vi`) */
  espeakVoice: string;
  /** `espeak`: IPA from espeak-ng; `text`: the characters themselves */
  phonemeType: 'espeak' | 'text';
}

export interface VoiceFiles {
  modelPath: string;
  configPath: string;
}

export class VoiceConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VoiceConfigError';
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `model.onnx` + `model.onnx.json`, or the directory's only `.onnx` file with `<file>.json` or `config.json`. */
export async function locateVoiceFiles(dir: string): Promise<VoiceFiles> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    throw new VoiceConfigError(`voice directory ${dir} cannot be read: ${(err as Error).message}`);
  }
  const models = names.filter((n) => n.endsWith('.onnx'));
  const model = models.includes('model.onnx') ? 'model.onnx' : models.length === 1 ? models[0] : null;
  if (!model) throw new VoiceConfigError(`voice directory ${dir} must hold model.onnx or exactly one .onnx file`);
  const config = names.includes(`${model}.json`) ? `${model}.json` : names.includes('config.json') ? 'config.json' : null;
  if (!config) throw new VoiceConfigError(`voice directory ${dir} has no ${model}.json or config.json`);
  return { modelPath: path.join(dir, model), configPath: path.join(dir, config) };
}

export function parseVoiceConfig(json: unknown, source: string): PiperVoiceConfig {
  const fail = (field: string, rule: string) => new VoiceConfigError(`${source}: ${field} ${rule}`);
  if (!isRecord(json)) throw fail('root', 'must be an object');
  const audio = json.audio;
  if (!isRecord(audio) || !Number.isInteger(audio.sample_rate) || (audio.sample_rate as number) <= 0) {
    throw fail('audio.sample_rate', 'must be a positive integer');
  }
  const map = json.phoneme_id_map;
  if (!isRecord(map) || Object.keys(map).length === 0) throw fail('phoneme_id_map', 'must be a non-empty object');
  const phonemeIdMap: Record<string, number[]> = {};
  for (const [phoneme, ids] of Object.entries(map)) {
    const list = Array.isArray(ids) ? ids : [ids];
    if (!list.every((i) => Number.isInteger(i) && (i as number) >= 0)) throw fail(`phoneme_id_map["${phoneme}"]`, 'must list non-negative integers');
    phonemeIdMap[phoneme] = list as number[];
  }
  const speakers = isRecord(json.speaker_id_map) ? json.speaker_id_map : {};
  const inference = isRecord(json.inference) ? json.inference : {};
  const num = (v: unknown, fallback: number) => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);
  const espeak = isRecord(json.espeak) ? json.espeak : {};
  return {
    sampleRate: audio.sample_rate as number,
    phonemeIdMap,
    numSpeakers: Math.max(1, num(json.num_speakers, 1)),
    speakerIdMap: Object.fromEntries(Object.entries(speakers).filter(([, v]) => Number.isInteger(v))) as Record<string, number>,
    noiseScale: num(inference.noise_scale, 0.667),
    lengthScale: num(inference.length_scale, 1),
    noiseW: num(inference.noise_w, 0.8),
    espeakVoice: typeof espeak.voice === 'string' && espeak.voice ? espeak.voice : 'vi',
    phonemeType: json.phoneme_type === 'text' ? 'text' : 'espeak',
  };
}

export async function readVoiceConfig(configPath: string): Promise<PiperVoiceConfig> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(configPath, 'utf8'));
  } catch (err) {
    throw new VoiceConfigError(`${configPath} is not readable JSON: ${(err as Error).message}`);
  }
  return parseVoiceConfig(json, configPath);
}
