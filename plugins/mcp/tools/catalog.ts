import Joi from 'joi';
import { nullable, type ToolDefinition } from '../tool.ts';
import { searchVoices } from '../../../core/voice-search.ts';
import { CAPABILITIES_URI } from '../ui/resources.ts';

/** The free tools: what the server can do, voices, styles and cue tags, the balance. */

interface Voice {
  id: string;
  name?: string;
  description?: string | null;
  gender: string | null;
  region: string | null;
  engine: string;
  kind: string;
}

const noArgs = { type: 'object', properties: {}, additionalProperties: false };

export function listCapabilities(summary: () => { tools: Array<{ name: string; title: string; paid: boolean }>; prompts: string[]; audiobooks: boolean }): ToolDefinition<Record<string, never>> {
  return {
    name: 'list_capabilities',
    title: 'What VieNeu can do',
    description: 'Lists what this Vietnamese text-to-speech server can do: its tools (free or paid in tokens), engines and their prices, limits, and what it does not offer.',
    inputSchema: noArgs,
    args: Joi.object({}),
    paid: false,
    readOnly: true,
    ui: CAPABILITIES_URI,
    async run(_args, ctx) {
      const { body: engines } = await ctx.api.json<{ engines: Array<{ key: string; label: string; billingMultiplier: number; features: string[] }>; globalMultiplier: number }>('GET', '/engines');
      const s = summary();
      const structured = {
        service: 'VieNeu — Vietnamese text-to-speech',
        tools: s.tools,
        prompts: s.prompts,
        engines: engines.engines,
        globalMultiplier: engines.globalMultiplier,
        pricing: 'tokens = characters (at least 50) × engine multiplier × global multiplier',
        limits: { textToSpeechCharacters: 50_000, mp3UpToCharacters: 1500, linkHours: 24 },
        audiobooks: s.audiobooks,
        notOffered: ['voice cloning (done in the VieNeu web studio)', 'dubbing of recordings', 'subtitle (.srt) dubbing'],
      };
      const lines = s.tools.map((t) => `- ${t.name}: ${t.title}${t.paid ? ' (costs tokens)' : ''}`);
      const prices = engines.engines.map((e) => `${e.key} (${e.label}): ${e.billingMultiplier} × ${engines.globalMultiplier} tokens per character`);
      return {
        text: `VieNeu reads Vietnamese text aloud.\nTools:\n${lines.join('\n')}\nEngines: ${prices.join('; ')}. At least 50 characters are billed per request.\nNot offered here: ${structured.notOffered.join(', ')}.`,
        structured,
      };
    },
  };
}

export const listVoices: ToolDefinition<{ search?: string; limit: number }> = {
  name: 'list_voices',
  title: 'Find a voice',
  description: 'Lists voices, or finds them: search by gender (nữ/nam, female/male), region (miền Bắc/Trung/Nam, north/central/south), name, or words of the description, in Vietnamese or English. When no voice has every word, the closest come back with the words they lack.',
  inputSchema: {
    type: 'object',
    properties: {
      search: nullable({ type: 'string', maxLength: 200, description: 'What the voice should be, e.g. "giọng nữ miền Nam" or "warm male".' }),
      limit: nullable({ type: 'integer', minimum: 1, maximum: 100, default: 25, description: 'At most this many voices (1 to 100, default 25).' }),
    },
    additionalProperties: false,
  },
  args: Joi.object({ search: Joi.string().allow('').max(200), limit: Joi.number().integer().min(1).max(100).default(25) }),
  paid: false,
  readOnly: true,
  async run({ search, limit }, ctx) {
    const { body } = await ctx.api.json<{ voices: Voice[] }>('GET', '/voices');
    const result = searchVoices(body.voices, search, limit);
    const voices = result.matches.map((m) => ({ ...m.voice, ...(m.missingWords.length ? { missingWords: m.missingWords } : {}), ...(m.exactName ? { exactName: true } : {}) }));
    const line = (v: (typeof voices)[number]) => `- ${v.id} (${v.name ?? v.id}; ${v.gender ?? 'gender not recorded'}, ${v.region ?? 'region not recorded'}): ${v.description ?? ''}${v.missingWords ? ` [lacks: ${v.missingWords.join(', ')}]` : ''}`;
    const head = !search?.trim()
      ? `${result.total} voices:`
      : result.matches.length === 0
        ? `No voice matches "${search}". Try fewer or other words (gender, region, name).`
        : result.complete
          ? `${result.total} voice(s) match "${search}":`
          : `No voice has every word of "${search}"; the closest:`;
    return {
      text: [head, ...voices.map(line), voices.length ? 'Pass the id as "voice" to text_to_speech.' : ''].filter(Boolean).join('\n'),
      structured: { search: search ?? null, terms: result.terms, complete: result.complete, count: voices.length, total: result.total, voices },
    };
  },
};

export const listEmotionTags: ToolDefinition<Record<string, never>> = {
  name: 'list_emotion_tags',
  title: 'Styles and cue tags',
  description: 'Reading styles and the inline cue tags the engine renders (write them in the text, e.g. "[cười]").',
  inputSchema: noArgs,
  args: Joi.object({}),
  paid: false,
  readOnly: true,
  async run(_args, ctx) {
    const { body } = await ctx.api.json<{ engine: string; styles: string[]; cueTags: string[]; emotions: string[] }>('GET', '/emotion-tags');
    return {
      text: `Engine ${body.engine}: cue tags ${body.cueTags.join(', ')} (write them in the text; other bracket tags are removed). Reading styles: ${body.styles.length ? body.styles.join(', ') : 'none (style values are accepted and ignored)'}.`,
      structured: body,
    };
  },
};

export const getTokenBalance: ToolDefinition<Record<string, never>> = {
  name: 'get_token_balance',
  title: 'Token balance',
  description: 'Tokens the user can spend now, in total, and the plan\'s daily and weekly caps with their reset times.',
  inputSchema: noArgs,
  args: Joi.object({}),
  paid: false,
  readOnly: true,
  async run(_args, ctx) {
    const { body } = await ctx.api.json<{ remaining: number; spendableTokens: number; totalRemainingTokens: number; plan: Record<string, any> | null }>('GET', '/balance');
    const plan = body.plan;
    const caps = plan ? [plan.daily && `daily ${plan.daily.remaining}/${plan.daily.limit} left until ${plan.daily.resetAt}`, plan.weekly && `weekly ${plan.weekly.remaining}/${plan.weekly.limit} left until ${plan.weekly.resetAt}`].filter(Boolean) : [];
    return {
      text: `${body.remaining} tokens can be spent on one request now; ${body.spendableTokens} request after request; ${body.totalRemainingTokens} left in all plans.${plan ? ` Plan "${plan.name}"${plan.expiresAt ? `, expires ${plan.expiresAt}` : ''}${caps.length ? `; ${caps.join('; ')}` : ''}.` : ' No active plan.'} Prices per character are in list_capabilities.`,
      structured: body,
    };
  },
};
