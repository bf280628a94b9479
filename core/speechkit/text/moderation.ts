/**
 * Moderation for aiRefine: a configured list of terms, matched as whole
 * words regardless of case and Vietnamese diacritics, so "ma tuy", "MA TÚY"
 * and "ma túy" are one term while "mát" does not match "ma".
 */

export class ModerationRefusal extends Error {
  /** the configured terms that matched, for logs; never echoed to clients */
  readonly terms: string[];

  constructor(terms: string[]) {
    super('The text was refused by content moderation');
    this.name = 'ModerationRefusal';
    this.terms = terms;
  }
}

/** Strips diacritics (đ included, which NFD does not decompose) and case. */
export function foldForMatching(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/[đĐ]/gu, 'd')
    .toLowerCase();
}

function termPattern(term: string): RegExp | null {
  const words = foldForMatching(term).split(/[^\p{L}\p{N}]+/u).filter(Boolean);
  if (words.length === 0) return null;
  const body = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^\\p{L}\\p{N}]+');
  return new RegExp(`(?<![\\p{L}\\p{N}])${body}(?![\\p{L}\\p{N}])`, 'u');
}

export class ModerationList {
  private readonly patterns: Array<{ term: string; re: RegExp }>;

  constructor(terms: readonly string[]) {
    this.patterns = terms.flatMap((term) => {
      const re = termPattern(term);
      return re ? [{ term, re }] : [];
    });
  }

  /** The configured terms found in the text (empty when the text passes). */
  matches(text: string): string[] {
    const folded = foldForMatching(text);
    return this.patterns.filter((p) => p.re.test(folded)).map((p) => p.term);
  }

  /** Throws ModerationRefusal when any term is present. */
  check(text: string): void {
    const found = this.matches(text);
    if (found.length > 0) throw new ModerationRefusal(found);
  }
}
