import test from 'ava';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { startTestPlatform } from '../helpers/platform.ts';
import { requireGenerator } from '../helpers/openapi-client.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * The reference is usable by client generators: openapi-typescript turns
 * the live document into types, the project's TypeScript compiler checks a
 * small client written against them (openapi-fetch) under `strict`, and
 * that client submits a job and polls it on a running platform. The
 * `@ts-expect-error` lines prove the types are precise: were a field or a
 * route untyped, they would not be errors and the compile would fail.
 */

const CLIENT = `import createClient from 'openapi-fetch';
import type { paths } from './api.ts';

export async function run(baseUrl: string, apiKey: string) {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${apiKey}\` } });
  const submitted = await client.POST('/api/v1/tts', {
    body: { text: 'Xin chào! Đây là bài kiểm tra ứng dụng khách được sinh từ tài liệu OpenAPI.', voiceId: 'vi-north-female-mai', speed: 1.1 },
  });
  if (!submitted.data) throw new Error(\`POST /tts answered \${submitted.response.status}: \${JSON.stringify(submitted.error)}\`);
  const jobId: string = submitted.data.jobId;
  const accepted: 'queued' | 'completed' = submitted.data.status;
  const poll = async () => {
    const polled = await client.GET('/api/v1/tts/{jobId}', { params: { path: { jobId } } });
    if (!polled.data) throw new Error(\`GET /tts/{jobId} answered \${polled.response.status}\`);
    const status: 'queued' | 'processing' | 'completed' | 'failed' = polled.data.status;
    return { status, audioUrl: polled.data.audioUrl, requestId: polled.response.headers.get('x-request-id') };
  };
  const unknown = await client.GET('/api/v1/tts/{jobId}', { params: { path: { jobId: 'job_unknown' } } });
  // Error bodies are the native envelope, or the edge's HTML page (a string) on its 429 and 503.
  const notFound = typeof unknown.error === 'object' ? { statusCode: unknown.error.statusCode, code: unknown.error.code } : null;
  return { jobId, accepted, poll, notFound };
}

export function misuses(client: ReturnType<typeof createClient<paths>>) {
  // @ts-expect-error text is required
  void client.POST('/api/v1/tts', { body: { voiceId: 'vi-north-female-mai' } });
  // @ts-expect-error speed is a number
  void client.POST('/api/v1/tts', { body: { text: 'Xin chào', speed: 'nhanh' } });
  // @ts-expect-error no such route
  void client.GET('/api/v1/khong-co');
  // @ts-expect-error the job id is a path parameter
  void client.GET('/api/v1/tts/{jobId}', {});
}
`;

/** What client.ts exports, as this test sees it. */
interface GeneratedClient {
  run(baseUrl: string, apiKey: string): Promise<{
    jobId: string;
    accepted: string;
    poll(): Promise<{ status: string; audioUrl?: string; requestId: string | null }>;
    notFound: { statusCode: number; code?: string } | null;
  }>;
}

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, allowImportingTsExtensions: true,
    verbatimModuleSyntax: true, noUnusedLocals: true, skipLibCheck: true, types: ['node'],
  },
  include: ['*.ts'],
};

test('a TypeScript client generated from the reference (openapi-typescript, openapi-fetch) compiles under strict and makes POST /tts and GET /tts/{jobId}', async (t) => {
  t.timeout(10 * 60_000, 'installing openapi-typescript the first time');
  const cli = requireGenerator(t);
  if (!cli) return;
  const p = await startTestPlatform();
  const dir = mkdtempSync(path.join(tmpdir(), 'vieneu-client-'));
  try {
    writeFileSync(path.join(dir, 'openapi.json'), await (await fetch(`${p.url}/api/v1/openapi.json`)).text());
    const generated = spawnSync(process.execPath, [cli, path.join(dir, 'openapi.json'), '-o', path.join(dir, 'api.ts')], { encoding: 'utf8', timeout: 120_000 });
    t.is(generated.status, 0, `${generated.stdout}${generated.stderr}`);
    writeFileSync(path.join(dir, 'client.ts'), CLIENT);
    writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    symlinkSync(path.resolve('node_modules'), path.join(dir, 'node_modules'), 'dir');

    const compiled = spawnSync(process.execPath, [path.resolve('node_modules/typescript/bin/tsc'), '-p', dir], { encoding: 'utf8', timeout: 120_000 });
    t.is(compiled.status, 0, `tsc: ${compiled.stdout}${compiled.stderr}`);

    const { apiKey } = await p.bootstrap();
    const client = (await import(pathToFileURL(path.join(dir, 'client.ts')).href)) as GeneratedClient;
    const { jobId, accepted, poll, notFound } = await client.run(p.url, apiKey);
    t.regex(jobId, /^job_/);
    t.is(accepted, 'queued');
    t.deepEqual(notFound, { statusCode: 404, code: 'JOB_NOT_FOUND' });
    const done = (await waitFor(async () => {
      const polled = await poll();
      return polled.status === 'completed' || polled.status === 'failed' ? polled : null;
    }, { timeoutMs: 60_000, intervalMs: 250, what: 'the job to finish' }))!;
    t.is(done.status, 'completed');
    t.regex(done.audioUrl ?? '', /\/files\//);
    t.truthy(done.requestId);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await p.stop();
  }
});
