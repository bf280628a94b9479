/** Public surface of Vietnamese text preparation and the aiRefine port. */
export { prepareText, normalizeText, type PreparedText } from './prepare.ts';
export { splitChunks, type SplitOptions } from './split.ts';
export { CUE_TAGS, applyCueTags, segmentCues, type CueTag, type TextSegment } from './cues.ts';
export { readCardinal, readDigits, readNumberToken } from './numbers.ts';
export {
  EmbeddedRefiner, ModerationRefusal, createRefiner, refineText,
  type EmbeddedRefinerOptions, type RefinedText, type TextRefiner,
} from './refiner.ts';
export { ModerationList, foldForMatching } from './moderation.ts';
