import { en, type Messages } from './messages-en.ts';
import { vi } from './messages-vi.ts';

/**
 * The texts and numbers of a language, with nothing of the browser's state
 * (i18n.ts binds them to the chosen language), so the unit tests run them in
 * Node: messages with their placeholders and plural forms filled, numbers in
 * the language's style, durations in the language's units.
 */

export type Lang = 'vi' | 'en';
export type MessageKey = keyof Messages;
export type Params = Record<string, string | number>;

const dictionaries: Record<Lang, Messages> = { en, vi };

export const localeOf = (lang: Lang) => (lang === 'vi' ? 'vi-VN' : 'en-GB');

export function formatNumber(lang: Lang, n: number | null | undefined, digits = 0): string {
  if (n === null || n === undefined || Number.isNaN(n)) return '—';
  return new Intl.NumberFormat(localeOf(lang), { maximumFractionDigits: digits }).format(n);
}

/**
 * `{name}` is a parameter (a number in the language's style); `{name|one|other}`
 * the words for that number by the language's plural rules, `#` standing for
 * it: '{count|# voice matches|# voices match}'. Vietnamese has one form and needs none.
 */
export function fill(lang: Lang, text: string, params: Params = {}): string {
  return text.replace(/\{(\w+)(?:\|([^|{}]*)\|([^|{}]*))?\}/g, (whole, name: string, one?: string, other?: string) => {
    if (!(name in params)) return whole;
    const value = params[name]!;
    // Counts and tokens are whole: shown, and their plural chosen, as whole numbers.
    const shown = typeof value === 'number' ? formatNumber(lang, value) : value;
    if (one === undefined || other === undefined) return shown;
    const singular = typeof value === 'number' && new Intl.PluralRules(localeOf(lang), { maximumFractionDigits: 0 }).select(value) === 'one';
    return (singular ? one : other).replace(/#/g, shown);
  });
}

/** The message in `lang`, with its placeholders filled. */
export function message(lang: Lang, key: MessageKey, params: Params = {}): string {
  return fill(lang, dictionaries[lang][key] ?? en[key] ?? key, params);
}

/**
 * A duration: to the tenth of a second under a minute, then in whole seconds
 * with minutes (and hours). Rounded once, before it is split, so the seconds
 * carry: 119.6 s is "2 min 0 s", never "1 min 60 s".
 */
export function formatSeconds(lang: Lang, seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return '—';
  const tenths = Math.round(seconds * 10);
  if (tenths < 600) return message(lang, 'time.seconds', { seconds: formatNumber(lang, tenths / 10, 1) });
  const whole = Math.round(seconds);
  const hours = Math.floor(whole / 3600);
  const parts = { hours, minutes: Math.floor((whole % 3600) / 60), seconds: whole % 60 };
  return message(lang, hours > 0 ? 'time.hours' : 'time.minutes', parts);
}

/**
 * Whole minutes to tell for a lockout's Retry-After. The server rounds the
 * lock's end up to the second and then the wait up again, so a 15-minute
 * lock answers 900 or 901 s: a second over a whole minute is not another minute.
 */
export function lockMinutes(retryAfterSeconds: number | null): number {
  return Math.max(1, Math.ceil(((retryAfterSeconds ?? 60) - 1) / 60));
}
