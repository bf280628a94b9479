/** Emotion values accepted on native routes (SPEC: Emotion values). */
export const EMOTIONS = [
  'natural', 'storytelling', 'tin_tuc', 'tu_nhien', 'doc_truyen',
  ...Array.from({ length: 20 }, (_, i) => `emotion_${i}`),
];

/** Inline cue tags engine v4 renders; every other bracket tag is deleted. */
export const CUE_TAGS = ['[cười]', '[thở dài]', '[hắng giọng]'];

/** Reading styles per engine: v4 has none (the emotion field is accepted, billed and ignored). */
export const STYLES_BY_ENGINE: Record<string, string[]> = { v4: [] };
