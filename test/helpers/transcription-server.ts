/**
 * A small transcription server speaking the OpenAI-compatible API shape
 * (`POST /v1/audio/transcriptions`, multipart `file` + `model`,
 * `response_format=verbose_json` → `{ task, language, duration, text,
 * segments: [{ id, start, end, text }] }`), as self-hosted Whisper servers
 * do. It really listens to the upload: it decodes it with ffmpeg, finds the
 * utterances by their level, and gives each the next text of its script.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { unlink } from 'node:fs/promises';
import formidable from 'formidable';
import { decodeToPcm } from '../../core/speechkit/audio/decode.ts';
import { speechRegions } from './speech-regions.ts';

export interface ReceivedRequest {
  path: string;
  authorization: string | null;
  fields: Record<string, string>;
  fileName: string | null;
  fileBytes: number;
}

export interface TranscriptionServer {
  /** base URL to put in ASR_URL (ends with /v1) */
  url: string;
  requests: ReceivedRequest[];
  /** the texts given to the utterances, in order */
  script: string[];
  /** answer every request with this status instead (failure tests) */
  failWith: number | null;
  close(): Promise<void>;
}

async function parseForm(req: IncomingMessage) {
  const form = formidable({ maxFileSize: 20 * 1024 * 1024 });
  const [fields, files] = await form.parse(req);
  const flat = Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, String(v?.[0] ?? '')]));
  return { fields: flat, file: files.file?.[0] ?? null };
}

export async function startTranscriptionServer(script: string[]): Promise<TranscriptionServer> {
  const state: TranscriptionServer = { url: '', requests: [], script, failWith: null, close: async () => undefined };
  const server: Server = createServer(async (req, res) => {
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    try {
      if (req.method !== 'POST' || req.url !== '/v1/audio/transcriptions') return reply(404, { error: { message: 'not found' } });
      const { fields, file } = await parseForm(req);
      state.requests.push({ path: req.url, authorization: req.headers.authorization ?? null, fields, fileName: file?.originalFilename ?? null, fileBytes: file?.size ?? 0 });
      if (state.failWith) return reply(state.failWith, { error: { message: 'failing on purpose' } });
      if (!file) return reply(400, { error: { message: 'file is required' } });
      const pcm = await decodeToPcm(file.filepath, 16000);
      await unlink(file.filepath).catch(() => undefined);
      const samples = new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length >> 1);
      const regions = speechRegions({ sampleRate: 16000, samples, seconds: samples.length / 16000 }, 300);
      const segments = regions.map((r, i) => ({ id: i, seek: 0, start: r.start, end: r.end, text: ` ${state.script[i % state.script.length]}`, tokens: [], temperature: 0 }));
      if (fields.response_format !== 'verbose_json') return reply(200, { text: segments.map((s) => s.text).join('') });
      reply(200, { task: 'transcribe', language: 'vietnamese', duration: samples.length / 16000, text: segments.map((s) => s.text).join(''), segments });
    } catch (err) {
      reply(500, { error: { message: (err as Error).message } });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  state.close = () => new Promise((resolve) => server.close(() => resolve()));
  return state;
}

