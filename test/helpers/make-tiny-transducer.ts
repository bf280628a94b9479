/**
 * Builds a tiny but valid offline transducer in the layout sherpa-onnx loads
 * (no model can be downloaded here): `encoder.onnx` (x [N,T,80] fbank,
 * x_lens [N] → encoder_out [N,T,V], encoder_out_lens [N]), `decoder.onnx`
 * (y [N,2] → decoder_out [N,V]; metadata vocab_size, context_size),
 * `joiner.onnx` (encoder_out + decoder_out → logit [N,V]) and `tokens.txt`.
 * The "acoustic model" is one rule: a frame whose loudest mel bin is above
 * -8 (log energy: speech) emits the token `▁xin`, a quiet frame emits blank, so
 * the real loading, feature extraction and greedy search run on it and
 * speech comes back as text.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;
const FLOAT = onnx.TensorProto.DataType.FLOAT;
const INT64 = onnx.TensorProto.DataType.INT64;
const FEATURES = 80;
export const TINY_TOKENS = ['<blk>', '▁xin', '▁chào', '<unk>'];
const V = TINY_TOKENS.length;

const valueInfo = (name: string, elemType: number, dims: Array<number | string>) =>
  onnx.ValueInfoProto.create({
    name,
    type: { tensorType: { elemType, shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) } } },
  });
const floats = (name: string, dims: number[], values: number[]) => onnx.TensorProto.create({ name, dataType: FLOAT, dims, floatData: values });
const node = (opType: string, inputs: string[], outputs: string[], attribute: NonNullable<Parameters<typeof onnx.AttributeProto.create>[0]>[] = []) =>
  onnx.NodeProto.create({ opType, input: inputs, output: outputs, name: `${opType}_${outputs[0]}`, attribute });
const castTo = (to: number) => [{ name: 'to', type: onnx.AttributeProto.AttributeType.INT, i: to }];

function model(name: string, graph: Parameters<typeof onnx.GraphProto.create>[0], metadata: Record<string, string> = {}): Uint8Array {
  return onnx.ModelProto.encode(onnx.ModelProto.create({
    irVersion: 7, producerName: 'vieneu-tiny-transducer-test', opsetImport: [{ domain: '', version: 13 }],
    graph: onnx.GraphProto.create({ name, ...graph }),
    metadataProps: Object.entries(metadata).map(([key, value]) => ({ key, value })),
  })).finish();
}

export function buildTinyTransducer(): { encoder: Uint8Array; decoder: Uint8Array; joiner: Uint8Array; tokens: string } {
  // The loudest mel bin of a frame decides: above -8 (log energy; digital silence is -15.9) token 1 wins over blank.
  const encoder = model('encoder', {
    node: [
      node('ReduceMax', ['x'], ['loudest'], [{ name: 'axes', type: onnx.AttributeProto.AttributeType.INTS, ints: [2] }, { name: 'keepdims', type: onnx.AttributeProto.AttributeType.INT, i: 1 }]),
      node('Mul', ['loudest', 'w'], ['scaled']),
      node('Add', ['scaled', 'b'], ['encoder_out']),
      node('Identity', ['x_lens'], ['encoder_out_lens']),
    ],
    input: [valueInfo('x', FLOAT, ['N', 'T', FEATURES]), valueInfo('x_lens', INT64, ['N'])],
    output: [valueInfo('encoder_out', FLOAT, ['N', 'T', V]), valueInfo('encoder_out_lens', INT64, ['N'])],
    initializer: [floats('w', [V], [0, 1, 0, 0]), floats('b', [V], [0, 8, -1000, -1000])],
  }, { model_type: 'zipformer2' });
  const decoder = model('decoder', {
    node: [node('Cast', ['y'], ['y_f'], castTo(FLOAT)), node('MatMul', ['y_f', 'zeros'], ['decoder_out'])],
    input: [valueInfo('y', INT64, ['N', 2])],
    output: [valueInfo('decoder_out', FLOAT, ['N', V])],
    initializer: [floats('zeros', [2, V], new Array(2 * V).fill(0))],
  }, { vocab_size: String(V), context_size: '2' });
  const joiner = model('joiner', {
    node: [node('Add', ['encoder_out', 'decoder_out'], ['logit'])],
    input: [valueInfo('encoder_out', FLOAT, ['N', V]), valueInfo('decoder_out', FLOAT, ['N', V])],
    output: [valueInfo('logit', FLOAT, ['N', V])],
  });
  return { encoder, decoder, joiner, tokens: TINY_TOKENS.map((t, i) => `${t} ${i}`).join('\n') + '\n' };
}

export async function writeTinyTransducer(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const m = buildTinyTransducer();
  await writeFile(path.join(dir, 'encoder-epoch-1-avg-1.onnx'), m.encoder);
  await writeFile(path.join(dir, 'decoder-epoch-1-avg-1.onnx'), m.decoder);
  await writeFile(path.join(dir, 'joiner-epoch-1-avg-1.onnx'), m.joiner);
  await writeFile(path.join(dir, 'tokens.txt'), m.tokens);
}
