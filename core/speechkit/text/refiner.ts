/**
 * The aiRefine port: moderation plus pronunciation normalisation that goes
 * beyond deterministic preparation. It is a port because a hosted language
 * model can take the embedded rules' place (SPEC: "one extra round trip");
 * callers run it before prepareText, on the raw request text.
 */
import type { Config } from '../../../config/load.ts';
import { readFormulas } from './formulas.ts';
import { ModerationList } from './moderation.ts';
import { respellTokens } from './spelling.ts';
import { capCombiningRuns } from './unicode.ts';

export { ModerationRefusal } from './moderation.ts';

export interface RefinedText {
  text: string;
}

export interface TextRefiner {
  /** Resolves with speakable text, or rejects with ModerationRefusal (422 at the API). */
  refine(text: string): Promise<RefinedText>;
}

export interface EmbeddedRefinerOptions {
  moderationTerms: readonly string[];
}

/** Applies moderation first: refused text must cost no further work. */
export function refineText(text: string, moderation: ModerationList): RefinedText {
  const nfc = capCombiningRuns(text).normalize('NFC');
  moderation.check(nfc);
  return { text: respellTokens(readFormulas(nfc)) };
}

export class EmbeddedRefiner implements TextRefiner {
  private readonly moderation: ModerationList;

  constructor(options: EmbeddedRefinerOptions) {
    this.moderation = new ModerationList(options.moderationTerms);
  }

  async refine(text: string): Promise<RefinedText> {
    return refineText(text, this.moderation);
  }
}

export function createRefiner(config: Pick<Config, 'moderationTerms'>): TextRefiner {
  return new EmbeddedRefiner({ moderationTerms: config.moderationTerms });
}
