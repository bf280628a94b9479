/**
 * The refiner as request handlers use it: synchronous embedded rules, with a
 * moderation refusal already turned into the API's 422 so no plugin has to
 * know the ModerationRefusal type.
 */
import { ApiError } from '../../errors.ts';
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

/** Moderates and pronunciation-normalises; throws ApiError 422 on a moderation refusal. */
export function refineForRequest(text: string, moderationTerms: readonly string[]): RefinedText {
  try {
    return refineText(text, listFor(moderationTerms));
  } catch (err) {
    if (err instanceof ModerationRefusal) {
      throw new ApiError(422, MODERATION_MESSAGE, { compatType: 'content_policy_violation', usageCode: 'moderation_refused' });
    }
    throw err;
  }
}
