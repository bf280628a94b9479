/**
 * The refiner as request handlers use it: synchronous embedded rules, with a
 * moderation refusal already turned into the domain's `unprocessable` refusal so no plugin has to
 * know the ModerationRefusal type.
 */
import { DomainError } from '../../errors.ts';
import { ModerationList, ModerationRefusal } from './moderation.ts';
import { refineText, type RefinedText } from './refiner.ts';

export const MODERATION_MESSAGE = 'The text was refused by content moderation.';

/** Config arrays live for the process; compiling their patterns once per array is enough. */
const lists = new WeakMap<readonly string[], ModerationList>();

function listFor(terms: readonly string[]): ModerationList {
  let list = lists.get(terms);
  if (!list) {
    list = new ModerationList(terms);
    lists.set(terms, list);
  }
  return list;
}

/** Moderates and pronunciation-normalises; throws the domain's unprocessable refusal on moderation. */
export function refineForRequest(text: string, moderationTerms: readonly string[]): RefinedText {
  try {
    return refineText(text, listFor(moderationTerms));
  } catch (err) {
    if (err instanceof ModerationRefusal) {
      throw new DomainError('unprocessable', MODERATION_MESSAGE, { code: 'CONTENT_REJECTED' });
    }
    throw err;
  }
}

/**
 * Pieces of one request spoken separately (dialogue turns, subtitle cues):
 * moderated together first (one refusal for the whole request), then
 * normalised piece by piece.
 */
export function refinePiecesForRequest(texts: readonly string[], moderationTerms: readonly string[]): string[] {
  refineForRequest(texts.join('\n'), moderationTerms);
  return texts.map((text) => refineForRequest(text, moderationTerms).text);
}
