import Joi from 'joi';
import { idArgument, idSchema, nullable, type ToolDefinition, type ToolOutput } from '../tool.ts';
import { AUDIOBOOK_URI } from '../ui/resources.ts';

/**
 * The audiobook tools, over SPEC "Audiobook operations" (plugins/audiobooks):
 * a draft with a narrator and a cast, chapters as scripts of segments,
 * start (each chapter billed when it renders), progress and links, list,
 * cancel. Registered only when the audiobooks plugin is loaded.
 */

type Book = Record<string, any> & { id: string; title: string; status: string };

const castSchema = nullable({
  type: 'array', maxItems: 30,
  description: 'Characters with their own voice: [{ speaker, voice_id }]. Segments name the speaker.',
  items: {
    type: 'object',
    properties: { speaker: { type: 'string', minLength: 1, maxLength: 100 }, voice_id: { type: 'string', minLength: 1, maxLength: 200 } },
    required: ['speaker', 'voice_id'],
    additionalProperties: false,
  },
});
const castArgs = Joi.array().items(Joi.object({ speaker: Joi.string().trim().min(1).max(100).required(), voice_id: Joi.string().trim().min(1).max(200).required() })).max(30);
const toCast = (cast?: Array<{ speaker: string; voice_id: string }>) => (cast ?? []).map((c) => ({ speaker: c.speaker, voiceId: c.voice_id }));
const bookId = idSchema('The audiobook id.');
const bookPath = (id: string) => `/audiobooks/${encodeURIComponent(id)}`;
/** the audiobook routes' field names, as their refusals say them ("Send afterSegment 2 …") */
const routeTerms = { afterSegment: 'after_segment', appendTo: 'append_to', voiceId: 'voice_id', narratorVoice: 'narrator_voice', sceneBreak: 'scene_break' };

function progressText(book: Book): string {
  const t = book.totals ?? {};
  const chapters = Array.isArray(book.chapters) ? book.chapters : [];
  const lines = chapters.map((c: Record<string, any>) => `  ${c.index}. ${c.title ?? ''} — ${c.status}${c.audioUrl ? `: ${c.audioUrl}` : ''}`);
  const waiting = book.waitingReason ? ` (waiting: ${book.waitingReason})` : '';
  return [`"${book.title}" (${book.id}) is ${book.status}${waiting}: ${t.completedChapters ?? 0}/${t.chapters ?? chapters.length} chapters done, ${t.tokensCharged ?? 0} tokens charged, about ${t.estimatedTokens ?? 0} more for chapters not rendered yet.`, ...lines].join('\n');
}

const bookOutput = (book: Book, lead = ''): ToolOutput => ({ text: (lead ? `${lead}\n` : '') + progressText(book), structured: { book } });

export const audiobookTools: ToolDefinition[] = [
  {
    name: 'create_audiobook',
    title: 'Create an audiobook',
    description: 'Creates a draft audiobook with a narrator voice and, optionally, up to 30 characters with their own voices. Nothing is billed until start_audiobook. Catalogue voices only.',
    inputSchema: {
      type: 'object',
      properties: {
        title: { type: 'string', minLength: 1, maxLength: 200 },
        author: nullable({ type: 'string', minLength: 1, maxLength: 120 }),
        narrator_voice: { type: 'string', minLength: 1, maxLength: 200, description: 'Voice id or name that reads titles and narration (see list_voices).' },
        cast: castSchema,
      },
      required: ['title', 'narrator_voice'],
      additionalProperties: false,
    },
    args: Joi.object({ title: Joi.string().trim().min(1).max(200).required(), author: Joi.string().trim().min(1).max(120), narrator_voice: Joi.string().trim().min(1).max(200).required(), cast: castArgs }),
    paid: false,
    readOnly: false,
    routeTerms,
    ui: AUDIOBOOK_URI,
    async run(args, ctx) {
      const { body } = await ctx.api.json<Book>('POST', '/audiobooks', { title: args.title, author: args.author ?? null, narratorVoice: args.narrator_voice, cast: toCast(args.cast) });
      return bookOutput(body, `Created the draft audiobook ${body.id}. Add chapters with add_audiobook_chapter, then start_audiobook.`);
    },
  },
  {
    name: 'add_audiobook_chapter',
    title: 'Add or continue a chapter',
    description: 'Adds a chapter as a script of segments (narration, or a cast speaker\'s words), or continues a chapter not started yet with append_to and after_segment (the chapter\'s current segment count, so nothing is added twice). Plain text may be given instead of segments: each paragraph becomes a narration segment.',
    inputSchema: {
      type: 'object',
      properties: {
        book_id: bookId,
        title: nullable({ type: 'string', minLength: 1, maxLength: 200, description: 'Chapter title (for a new chapter).' }),
        segments: nullable({
          type: 'array', minItems: 1, description: 'The chapter as segments; send segments or text, not both.',
          items: {
            type: 'object',
            properties: { text: { type: 'string', minLength: 1 }, speaker: { type: ['string', 'null'], minLength: 1, maxLength: 100 }, scene_break: { type: ['boolean', 'null'] } },
            required: ['text'],
            additionalProperties: false,
          },
        }),
        text: nullable({ type: 'string', minLength: 1, description: 'Plain text instead of segments (send one of them); paragraphs become narration.' }),
        append_to: nullable({ type: 'integer', minimum: 1, description: 'Continue this chapter (its index) instead of adding a new one.' }),
        after_segment: nullable({ type: 'integer', minimum: 0, description: 'With append_to: how many segments the chapter has now.' }),
        cast: castSchema,
      },
      required: ['book_id'],
      additionalProperties: false,
    },
    args: Joi.object({
      book_id: idArgument('a book id').required(),
      title: Joi.string().trim().min(1).max(200),
      segments: Joi.array().items(Joi.object({ text: Joi.string().required(), speaker: Joi.string().trim().min(1).max(100).allow(null), scene_break: Joi.boolean().allow(null) })).min(1),
      text: Joi.string().min(1),
      append_to: Joi.number().integer().min(1),
      after_segment: Joi.number().integer().min(0),
      cast: castArgs,
    }).xor('segments', 'text').messages({
      // joi names the whole arguments object "value"
      'object.missing': 'send the chapter as segments or as text',
      'object.xor': 'send segments or text, not both',
    }),
    paid: false,
    readOnly: false,
    routeTerms,
    ui: AUDIOBOOK_URI,
    async run(args, ctx) {
      const segments = args.segments
        ? args.segments.map((s: { text: string; speaker?: string | null; scene_break?: boolean | null }) => ({ text: s.text, speaker: s.speaker ?? null, sceneBreak: s.scene_break ?? false }))
        : String(args.text).split(/\n\s*\n/).map((p) => p.trim()).filter(Boolean).map((text) => ({ text, speaker: null, sceneBreak: false }));
      const body: Record<string, unknown> = { segments, cast: toCast(args.cast) };
      if (args.append_to !== undefined) body.appendTo = args.append_to;
      else body.title = args.title ?? 'Untitled chapter';
      if (args.after_segment !== undefined) body.afterSegment = args.after_segment;
      // The chapters route answers the chapter and the totals; the view and the text show the whole book.
      const { body: added } = await ctx.api.json<{ chapter: { index: number } }>('POST', `${bookPath(args.book_id)}/chapters`, body);
      const { body: book } = await ctx.api.json<Book>('GET', bookPath(args.book_id));
      return bookOutput(book, args.append_to ? `Continued chapter ${args.append_to}.` : `Added chapter ${added.chapter.index}.`);
    },
  },
  {
    name: 'start_audiobook',
    title: 'Start rendering',
    description: 'Starts (or resumes) rendering a book. The chapters are weighed against the user\'s plans first; each chapter is billed when it starts rendering.',
    inputSchema: { type: 'object', properties: { book_id: bookId }, required: ['book_id'], additionalProperties: false },
    args: Joi.object({ book_id: idArgument('a book id').required() }),
    paid: true,
    readOnly: false,
    routeTerms,
    ui: AUDIOBOOK_URI,
    async run({ book_id }, ctx) {
      await ctx.api.json('POST', `${bookPath(book_id)}/start`, {});
      const { body } = await ctx.api.json<Book>('GET', bookPath(book_id));
      return bookOutput(body, 'Rendering started; call get_audiobook to follow it (chapters render one at a time).');
    },
  },
  {
    name: 'get_audiobook',
    title: 'Audiobook progress',
    description: 'A book with its chapters, progress and, for finished chapters, MP3 links valid 24 hours.',
    inputSchema: { type: 'object', properties: { book_id: bookId }, required: ['book_id'], additionalProperties: false },
    args: Joi.object({ book_id: idArgument('a book id').required() }),
    paid: false,
    readOnly: true,
    routeTerms,
    ui: AUDIOBOOK_URI,
    async run({ book_id }, ctx) {
      const { body } = await ctx.api.json<Book>('GET', bookPath(book_id));
      return bookOutput(body);
    },
  },
  {
    name: 'list_audiobooks',
    title: 'List audiobooks',
    description: 'The user\'s audiobooks, newest first, a page at a time.',
    inputSchema: {
      type: 'object',
      properties: { page: nullable({ type: 'integer', minimum: 1, default: 1 }), limit: nullable({ type: 'integer', minimum: 1, maximum: 50, default: 20 }) },
      additionalProperties: false,
    },
    args: Joi.object({ page: Joi.number().integer().min(1).default(1), limit: Joi.number().integer().min(1).max(50).default(20) }),
    paid: false,
    readOnly: true,
    routeTerms,
    async run({ page, limit }, ctx) {
      const { body } = await ctx.api.json<{ items: Book[]; page: number; limit: number }>('GET', `/audiobooks?page=${page}&limit=${limit}`);
      const lines = body.items.map((b) => `- ${b.id}: "${b.title}" — ${b.status}`);
      return { text: lines.length ? `Audiobooks (page ${body.page}):\n${lines.join('\n')}` : 'No audiobooks on this page.', structured: body };
    },
  },
  {
    name: 'cancel_audiobook',
    title: 'Cancel an audiobook',
    description: 'Stops a book: chapters not started are never billed; a chapter already rendering finishes. It can be started again later.',
    inputSchema: { type: 'object', properties: { book_id: bookId }, required: ['book_id'], additionalProperties: false },
    args: Joi.object({ book_id: idArgument('a book id').required() }),
    paid: false,
    readOnly: false,
    routeTerms,
    ui: AUDIOBOOK_URI,
    async run({ book_id }, ctx) {
      await ctx.api.json('POST', `${bookPath(book_id)}/cancel`, {});
      const { body } = await ctx.api.json<Book>('GET', bookPath(book_id));
      return bookOutput(body, 'Cancelled.');
    },
  },
];
