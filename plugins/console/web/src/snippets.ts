/**
 * The playground's request as code a user can run: curl and the official
 * OpenAI clients (Python and JavaScript) against `POST /audio/speech`, with
 * the same text, voice, format, sample rate and speed.
 */

export interface SpeechRequest {
  input: string;
  voice: string;
  format: string;
  sampleRate: number;
  speed: number;
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const pyString = (s: string) => JSON.stringify(s);

export function speechBody(r: SpeechRequest): Record<string, unknown> {
  return { model: 'tts-1', input: r.input, voice: r.voice, response_format: r.format, sample_rate: r.sampleRate, speed: r.speed };
}

export function curlSnippet(origin: string, r: SpeechRequest): string {
  return [
    `curl -s ${origin}/api/v1/audio/speech \\`,
    '  -H "Authorization: Bearer $VIENEU_API_KEY" \\',
    '  -H "Content-Type: application/json" \\',
    `  -d ${shellQuote(JSON.stringify(speechBody(r)))} \\`,
    `  -o speech.${r.format}`,
  ].join('\n');
}

export function pythonSnippet(origin: string, r: SpeechRequest): string {
  return [
    'import os',
    'from openai import OpenAI',
    '',
    `client = OpenAI(base_url="${origin}/api/v1", api_key=os.environ["VIENEU_API_KEY"])`,
    'with client.audio.speech.with_streaming_response.create(',
    '    model="tts-1",',
    `    voice=${pyString(r.voice)},`,
    `    input=${pyString(r.input)},`,
    `    response_format="${r.format}",`,
    `    speed=${r.speed},`,
    `    extra_body={"sample_rate": ${r.sampleRate}},`,
    ') as response:',
    `    response.stream_to_file("speech.${r.format}")`,
  ].join('\n');
}

export function nodeSnippet(origin: string, r: SpeechRequest): string {
  return [
    "import { writeFile } from 'node:fs/promises';",
    "import OpenAI from 'openai';",
    '',
    `const client = new OpenAI({ baseURL: '${origin}/api/v1', apiKey: process.env.VIENEU_API_KEY });`,
    'const audio = await client.audio.speech.create({',
    "  model: 'tts-1',",
    `  voice: ${JSON.stringify(r.voice)},`,
    `  input: ${JSON.stringify(r.input)},`,
    `  response_format: '${r.format}',`,
    `  speed: ${r.speed},`,
    `  sample_rate: ${r.sampleRate}, // this API's extension: passed through as is`,
    '});',
    `await writeFile('speech.${r.format}', Buffer.from(await audio.arrayBuffer()));`,
  ].join('\n');
}
