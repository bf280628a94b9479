/**
 * Text as an engine reads it, the one job that runs in the preparation
 * workers: aiRefine (moderation and pronunciation rules) when asked, then
 * deterministic preparation. Outcomes are plain data so they cross a thread
 * boundary; speech-text-request.ts turns them into the API's errors.
 */
import { ModerationList, ModerationRefusal } from './moderation.ts';
import { refineText } from './refiner.ts';
import { checkText, prepareText, TextExpansionError } from './prepare.ts';

export interface SpeechTextInput {
  text: string;
  aiRefine: boolean;
  moderationTerms: readonly string[];
  /** NFC characters of the submitted text: the expansion limit is measured against it */
  sourceCharacters: number;
  /** only the verdict (refusals, and whether anything is speakable): no chunks are cut */
  checkOnly?: boolean;
}

export type SpeechTextOutcome =
  | { kind: 'ok'; text: string; chunks: string[] }
  | { kind: 'checked'; speakable: boolean; spoken: boolean }
  | { kind: 'moderation' }
  | { kind: 'expansion'; characters: number; limit: number };

/** Moderation lists compiled once per term list (the workers see a copy per message). */
const lists = new Map<string, ModerationList>();

function listFor(terms: readonly string[]): ModerationList {
  const key = JSON.stringify(terms);
  let list = lists.get(key);
  if (!list) {
    list = new ModerationList(terms);
    lists.set(key, list);
  }
  return list;
}

export function speechText(input: SpeechTextInput): SpeechTextOutcome {
  try {
    const source = input.aiRefine ? refineText(input.text, listFor(input.moderationTerms)).text : input.text;
    if (input.checkOnly) return { kind: 'checked', ...checkText(source, { sourceCharacters: input.sourceCharacters }) };
    const prepared = prepareText(source, { sourceCharacters: input.sourceCharacters });
    return { kind: 'ok', text: prepared.text, chunks: prepared.chunks };
  } catch (err) {
    if (err instanceof ModerationRefusal) return { kind: 'moderation' };
    if (err instanceof TextExpansionError) return { kind: 'expansion', characters: err.characters, limit: err.limit };
    throw err;
  }
}
