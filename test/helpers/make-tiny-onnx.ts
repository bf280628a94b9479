/**
 * Builds a tiny but valid Piper-signature ONNX voice (no weights can be
 * downloaded here): inputs `input` int64 [1,N], `input_lengths` int64 [1],
 * `scales` float32 [3], optionally `sid` int64 [1]; output `output` float32
 * [1,1,T]. Each phoneme id becomes a short sine burst whose pitch follows
 * the id (and the speaker), and the length scale stretches the result, so
 * output length depends on N and on speed like a real voice.
 *
 *   npx tsx test/helpers/make-tiny-onnx.ts <dir> [numSpeakers]
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;
const FLOAT = onnx.TensorProto.DataType.FLOAT;
const INT64 = onnx.TensorProto.DataType.INT64;

export interface TinyVoiceOptions {
  sampleRate?: number;
  numSpeakers?: number;
  /** samples of audio per phoneme id at length scale 1 */
  samplesPerId?: number;
}

/** Pad, BOS, EOS and the symbols espeak-ng prints for Vietnamese, one id each. */
const SYMBOLS = ['_', '^', '$', ' ', '.', ',', '!', '?', ...'abcdefghijklmnopqrstuvwxyz1234567',
  ...'ˈˌːɜəɛɔɐɪʊʌŋɲʃʒθðɡɣχʔɯɤæɑøœɒʎʁɹɾʋβɕʑʂʐɖʈɟɓɗ', '\u032a', '\u0303', '\u0361', 'ʲ', 'ʷ', 'ʰ'];

export function tinyPhonemeIdMap(): Record<string, number[]> {
  return Object.fromEntries(SYMBOLS.map((s, i) => [s, [i]]));
}

const valueInfo = (name: string, elemType: number, dims: Array<number | string>) =>
  onnx.ValueInfoProto.create({
    name,
    type: {
      tensorType: {
        elemType,
        shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) },
      },
    },
  });

const floats = (name: string, dims: number[], values: number[]) =>
  onnx.TensorProto.create({ name, dataType: FLOAT, dims, floatData: values });
const int64s = (name: string, dims: number[], values: number[]) =>
  onnx.TensorProto.create({ name, dataType: INT64, dims, int64Data: values });

type Attribute = NonNullable<Parameters<typeof onnx.AttributeProto.create>[0]>;

const node = (opType: string, inputs: string[], outputs: string[], attribute: Attribute[] = []) =>
  onnx.NodeProto.create({ opType, input: inputs, output: outputs, name: `${opType}_${outputs[0]}`, attribute });

export function buildTinyPiperModel(options: TinyVoiceOptions = {}): Uint8Array {
  const sampleRate = options.sampleRate ?? 16000;
  const k = options.samplesPerId ?? 160;
  const multiSpeaker = (options.numSpeakers ?? 1) > 1;
  // Phase step per sample for a 55 Hz base: id n sounds at (n + 1) x 55 Hz.
  const ramp = Array.from({ length: k }, (_, i) => (2 * Math.PI * 55 * i) / sampleRate);
  const nodes = [
    node('Cast', ['input'], ['ids_f'], [{ name: 'to', type: onnx.AttributeProto.AttributeType.INT, i: FLOAT }]),
    node('Add', ['ids_f', 'one'], ['ids_plus1']),
    node('Unsqueeze', ['ids_plus1', 'axis2'], ['ids_col']),
    node('Mul', ['ids_col', 'ramp'], ['phase0']),
  ];
  let phase = 'phase0';
  if (multiSpeaker) {
    // Each speaker shifts every pitch up by half the base, so speakers differ audibly.
    nodes.push(
      node('Cast', ['sid'], ['sid_f'], [{ name: 'to', type: onnx.AttributeProto.AttributeType.INT, i: FLOAT }]),
      node('Mul', ['sid_f', 'half'], ['sid_half']),
      node('Add', ['sid_half', 'one'], ['speaker_factor']),
      node('Mul', ['phase0', 'speaker_factor'], ['phase1']),
    );
    phase = 'phase1';
  }
  nodes.push(
    node('Sin', [phase], ['wave']),
    // input_lengths joins the graph (times zero) so runtimes keep it as a real input.
    node('Cast', ['input_lengths'], ['len_f'], [{ name: 'to', type: onnx.AttributeProto.AttributeType.INT, i: FLOAT }]),
    node('Mul', ['len_f', 'zero'], ['len_zero']),
    node('Add', ['amplitude', 'len_zero'], ['gain']),
    node('Mul', ['wave', 'gain'], ['loud']),
    node('Reshape', ['loud', 'flat_shape'], ['flat']),
    node('Slice', ['scales', 'slice_start', 'slice_end'], ['length_scale']),
    node('Concat', ['unit_scales', 'length_scale'], ['resize_scales'], [{ name: 'axis', type: onnx.AttributeProto.AttributeType.INT, i: 0 }]),
    node('Resize', ['flat', '', 'resize_scales'], ['output'], [
      { name: 'mode', type: onnx.AttributeProto.AttributeType.STRING, s: new TextEncoder().encode('nearest') },
    ]),
  );
  const inputs = [
    valueInfo('input', INT64, [1, 'phonemes']),
    valueInfo('input_lengths', INT64, [1]),
    valueInfo('scales', FLOAT, [3]),
    ...(multiSpeaker ? [valueInfo('sid', INT64, [1])] : []),
  ];
  const graph = onnx.GraphProto.create({
    name: 'tiny_piper',
    node: nodes,
    input: inputs,
    output: [valueInfo('output', FLOAT, [1, 1, 'samples'])],
    initializer: [
      floats('one', [1], [1]),
      floats('half', [1], [0.5]),
      floats('zero', [1], [0]),
      floats('amplitude', [1], [0.3]),
      floats('ramp', [1, 1, k], ramp),
      floats('unit_scales', [2], [1, 1]),
      int64s('axis2', [1], [2]),
      int64s('flat_shape', [3], [1, 1, -1]),
      int64s('slice_start', [1], [1]),
      int64s('slice_end', [1], [2]),
    ],
  });
  const model = onnx.ModelProto.create({
    irVersion: 7,
    producerName: 'vieneu-tiny-piper-test',
    opsetImport: [{ domain: '', version: 13 }],
    graph,
  });
  return onnx.ModelProto.encode(model).finish();
}

export function tinyVoiceConfig(options: TinyVoiceOptions = {}) {
  const numSpeakers = options.numSpeakers ?? 1;
  return {
    audio: { sample_rate: options.sampleRate ?? 16000 },
    espeak: { voice: 'vi' },
    phoneme_type: 'espeak',
    phoneme_id_map: tinyPhonemeIdMap(),
    num_speakers: numSpeakers,
    speaker_id_map: Object.fromEntries(Array.from({ length: numSpeakers }, (_, i) => [`speaker_${i}`, i])),
    inference: { noise_scale: 0.667, length_scale: 1, noise_w: 0.8 },
  };
}

/** Writes model.onnx and model.onnx.json into `dir` (created if needed). */
export async function writeTinyVoice(dir: string, options: TinyVoiceOptions = {}): Promise<{ modelPath: string; configPath: string }> {
  await mkdir(dir, { recursive: true });
  const modelPath = path.join(dir, 'model.onnx');
  const configPath = `${modelPath}.json`;
  await writeFile(modelPath, buildTinyPiperModel(options));
  await writeFile(configPath, JSON.stringify(tinyVoiceConfig(options), null, 2));
  return { modelPath, configPath };
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const dir = process.argv[2];
  if (!dir) {
    console.error('usage: tsx test/helpers/make-tiny-onnx.ts <dir> [numSpeakers]');
    process.exit(2);
  }
  const files = await writeTinyVoice(dir, { numSpeakers: Number(process.argv[3] ?? 1) });
  console.log(`wrote ${files.modelPath} and ${files.configPath}`);
}
