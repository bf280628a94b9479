/** Emotion values accepted on native routes (SPEC: Emotion values). */
export const EMOTIONS = [
  'natural', 'storytelling', 'tin_tuc', 'tu_nhien', 'doc_truyen',
  ...Array.from({ length: 20 }, (_, i) => `emotion_${i}`),
];

/** Inline cue tags engine v4 renders, by name; every other bracket tag is deleted. */
export const CUE_TAG_NAMES = ['cười', 'thở dài', 'hắng giọng'] as const;

/** The same tags as written in text, as `GET /emotion-tags` lists them. */
export const CUE_TAGS = CUE_TAG_NAMES.map((name) => `[${name}]`);

/** Reading styles per engine: v4 has none (the emotion field is accepted, billed and ignored). */
export const STYLES_BY_ENGINE: Record<string, string[]> = { v4: [] };
