import Joi from 'joi';
import { setTimeout as sleep } from 'node:timers/promises';
import { EMOTIONS } from '../../../config/emotions.ts';
import { countCharacters } from '../../../core/billing/pricing.ts';
import { countWords, TEST_KEY_MAX_WORDS } from '../../../core/speechkit/text/word-cap.ts';
import { refusal, ToolError, type ApiCaller } from '../api.ts';
import { idArgument, idSchema, nullable, type ToolContext, type ToolDefinition, type ToolOutput } from '../tool.ts';
import { PLAYER_URI } from '../ui/resources.ts';

/**
 * `text_to_speech` and `get_speech_status` (SPEC MCP server): up to 1500
 * characters, one `POST /audio/speech` call and a 24-hour MP3 link (the
 * route's saved copy, `X-Service-Job-Id`); longer text, one `POST /tts` job
 * (WAV), waited on for about 50 seconds, then the job id to poll.
 */

export const MP3_MAX_CHARACTERS = 1500;
export const TEXT_MAX_CHARACTERS = 50_000;
/** styles `/audio/speech` accepts; `v4` ignores every style anyway */
const COMPATIBLE_STYLES = new Set(['natural', 'storytelling']);
const SAVED_COPY_WAIT_MS = 15_000;

interface SpeechArgs {
  text: string;
  voice?: string;
  speed?: number;
  style?: string;
}

type JobView = Record<string, unknown> & { jobId: string; status: string; audioUrl?: string; error?: string };

async function pollJob(api: ApiCaller, jobId: string, untilMs: number, pollMs: number, signal?: AbortSignal): Promise<JobView> {
  for (;;) {
    const { body } = await api.json<JobView>('GET', `/tts/${encodeURIComponent(jobId)}`);
    if (body.status === 'completed' || body.status === 'failed' || Date.now() >= untilMs || signal?.aborted) return body;
    await sleep(Math.min(pollMs, Math.max(0, untilMs - Date.now())));
  }
}

/** `mp3` for the saved copies of /audio/speech, `wav` for jobs: read from the link. */
function formatOf(audioUrl: string | undefined): string | undefined {
  return audioUrl ? /\.([a-z0-9]+)\?/.exec(audioUrl)?.[1] : undefined;
}

function jobOutput(job: JobView, extra: Record<string, unknown>): ToolOutput {
  if (job.status === 'completed') {
    extra = { format: formatOf(job.audioUrl), ...extra };
    const seconds = typeof job.duration === 'number' ? ` (${job.duration.toFixed(1)} s)` : '';
    return {
      text: `The audio is ready${seconds}: ${job.audioUrl}\nThe link works for 24 hours. Job id: ${job.jobId}.`,
      structured: { ...extra, ...job, linkExpiresInSeconds: job.audioUrlExpiresIn ?? 86_400 },
    };
  }
  if (job.status === 'failed') {
    throw new ToolError(`The speech job ${job.jobId} failed: ${job.error ?? 'synthesis failed'}. Its tokens were refunded; try again.`, { status: 500, code: 'JOB_FAILED', jobId: job.jobId });
  }
  const wait = typeof job.estimatedWaitSeconds === 'number' ? ` (about ${job.estimatedWaitSeconds} s of queue ahead)` : '';
  return {
    text: `The audio is still being made${wait}. Call get_speech_status with job_id "${job.jobId}" in a minute to get the link.`,
    structured: { ...extra, ...job },
  };
}

type Cap = { remaining: number; resetAt: string } | null;

/**
 * `/audio/speech` answers in the compatible envelope, which has no token
 * figures and no code (`code: null`): a plan that cannot pay is explained
 * from the balance and prices, with the code the native routes give it.
 */
async function withShortfall(err: unknown, ctx: ToolContext, characters: number): Promise<never> {
  if (!(err instanceof ToolError) || (err.details.status !== 403 && err.details.status !== 429)) throw err;
  try {
    const [{ body: balance }, { body: prices }] = await Promise.all([
      ctx.api.json<{ remaining: number; totalRemainingTokens: number; plan: { daily: Cap; weekly: Cap } | null }>('GET', '/balance'),
      ctx.api.json<{ engines: Array<{ isDefault: boolean; billingMultiplier: number }>; globalMultiplier: number }>('GET', '/engines'),
    ]);
    const engine = prices.engines.find((e) => e.isDefault) ?? prices.engines[0];
    const required = Math.ceil(Math.max(50, characters) * engine.billingMultiplier * prices.globalMultiplier - 1e-9);
    // No active grant of the account has a token left: the job route's GRANT_INACTIVE, with its advice (no shorter text or cap helps).
    if (err.details.status === 403 && !err.details.code && (balance.plan === null || balance.totalRemainingTokens === 0)) {
      throw refusal(403, { message: err.details.message, code: 'GRANT_INACTIVE', required });
    }
    if (balance.remaining < required) {
      // 403: the plan's tokens; 429: the cap that is short (a 429 with enough under both caps is a rate limit, and gets no code here).
      const short = (cap: Cap | undefined) => (cap && cap.remaining < required ? cap : null);
      const daily = short(balance.plan?.daily);
      const weekly = daily ? null : short(balance.plan?.weekly);
      const code = err.details.code ?? (err.details.status === 403 ? 'GRANT_TOKENS_EXHAUSTED' : daily ? 'GRANT_DAILY_LIMIT' : weekly ? 'GRANT_WEEKLY_LIMIT' : null);
      const resetAt = (daily ?? weekly)?.resetAt ?? err.details.resetAt;
      const capped = Boolean(balance.plan?.daily || balance.plan?.weekly);
      throw new ToolError(`${err.details.message} The plan can spend at most ${balance.remaining} tokens on one request now (its balance${capped ? ' and its daily or weekly cap' : ''}) and this needs ${required}. Tell the user to top up their plan${capped ? ', wait for a cap to reset,' : ''} or use a shorter text.`, {
        ...err.details, code, resetAt, remaining: balance.remaining, required,
      });
    }
  } catch (inner) {
    if (inner instanceof ToolError && inner !== err && inner.details.required !== undefined) throw inner;
  }
  throw err;
}

/**
 * A test key's word cap, refused by `/audio/speech` with no code: a 400 on
 * `input` for a test key and a text over the cap is that refusal (of the
 * route's checks of `input`, only its schema's come before the cap).
 */
function withWordCap(err: unknown, ctx: ToolContext, text: string): void {
  if (!(err instanceof ToolError) || err.details.code || err.details.status !== 400 || err.param !== 'input') return;
  if (ctx.testKey && countWords(text, TEST_KEY_MAX_WORDS) > TEST_KEY_MAX_WORDS) {
    throw refusal(400, { message: err.details.message, code: 'TEST_KEY_WORD_LIMIT' });
  }
}

async function shortSpeech(args: SpeechArgs, ctx: ToolContext, characters: number): Promise<ToolOutput> {
  const body: Record<string, unknown> = { input: args.text, response_format: 'mp3' };
  if (args.voice) body.voice = args.voice;
  if (args.speed !== undefined) body.speed = args.speed;
  if (args.style && COMPATIBLE_STYLES.has(args.style)) body.emotion = args.style;
  const res = await ctx.api.raw('POST', '/audio/speech', body).catch((err: unknown) => {
    withWordCap(err, ctx, args.text);
    return withShortfall(err, ctx, characters);
  });
  const jobId = res.headers.get('x-service-job-id');
  // The saved copy completes when the response has ended: read it to the end.
  const bytes = (await res.arrayBuffer()).byteLength;
  if (!jobId) throw new ToolError('The audio was made but no link was saved for it; call text_to_speech again.', { status: 502, code: 'NO_SAVED_COPY' });
  const job = await pollJob(ctx.api, jobId, Date.now() + SAVED_COPY_WAIT_MS, Math.min(ctx.pollMs, 250), ctx.signal);
  return jobOutput(job, { format: 'mp3', characters, bytes, route: 'audio_speech' });
}

async function longSpeech(args: SpeechArgs, ctx: ToolContext, characters: number): Promise<ToolOutput> {
  const body: Record<string, unknown> = { text: args.text };
  if (args.voice) body.voiceId = args.voice;
  if (args.speed !== undefined) body.speed = args.speed;
  if (args.style) body.emotion = args.style;
  const { body: created } = await ctx.api.json<JobView>('POST', '/tts', body);
  const job = created.status === 'completed' ? created : await pollJob(ctx.api, created.jobId, Date.now() + ctx.waitSeconds * 1000, ctx.pollMs, ctx.signal);
  return jobOutput(job, { format: 'wav', characters, route: 'tts' });
}

export const textToSpeech: ToolDefinition<SpeechArgs> = {
  name: 'text_to_speech',
  title: 'Text to speech',
  description: `Reads Vietnamese text aloud (English words inside it too) and returns a download link valid 24 hours. Up to ${MP3_MAX_CHARACTERS} characters the link is an MP3 made at once; longer text (up to ${TEXT_MAX_CHARACTERS}) becomes a WAV job that is waited on for about 50 seconds, after which the job id is returned for get_speech_status. Cue tags [cười], [thở dài], [hắng giọng] are rendered.`,
  inputSchema: {
    type: 'object',
    properties: {
      text: { type: 'string', minLength: 1, maxLength: TEXT_MAX_CHARACTERS, description: 'The text to read.' },
      voice: nullable({ type: 'string', minLength: 1, maxLength: 200, description: 'Voice id or name from list_voices (default: Mai, northern female).' }),
      speed: nullable({ type: 'number', minimum: 0.5, maximum: 2, description: 'Reading speed, 0.5 to 2.0 (default 1).' }),
      style: nullable({ type: 'string', enum: [...EMOTIONS, null], description: 'Reading style; the v4 engine accepts and ignores it.' }),
    },
    required: ['text'],
    additionalProperties: false,
  },
  args: Joi.object<SpeechArgs>({
    text: Joi.string().min(1).max(TEXT_MAX_CHARACTERS).required(),
    voice: Joi.string().trim().min(1).max(200),
    speed: Joi.number().min(0.5).max(2),
    style: Joi.string().valid(...EMOTIONS),
  }),
  paid: true,
  readOnly: false,
  ui: PLAYER_URI,
  routeTerms: { input: 'text', voiceId: 'voice' },
  async run(args, ctx) {
    const characters = countCharacters(args.text);
    return characters <= MP3_MAX_CHARACTERS ? shortSpeech(args, ctx, characters) : longSpeech(args, ctx, characters);
  },
};

export const getSpeechStatus: ToolDefinition<{ job_id: string }> = {
  name: 'get_speech_status',
  title: 'Speech job status',
  description: 'Status of a speech job from text_to_speech: queued, processing, completed (with a 24-hour link) or failed.',
  inputSchema: {
    type: 'object',
    properties: { job_id: idSchema('The job id text_to_speech returned.') },
    required: ['job_id'],
    additionalProperties: false,
  },
  args: Joi.object({ job_id: idArgument('a job id').required() }),
  paid: false,
  readOnly: true,
  ui: PLAYER_URI,
  async run({ job_id }, ctx) {
    const { body } = await ctx.api.json<JobView>('GET', `/tts/${encodeURIComponent(job_id)}`);
    return jobOutput(body, {});
  },
};
