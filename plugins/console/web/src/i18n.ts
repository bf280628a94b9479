import { en } from './messages-en.ts';
import { formatNumber, formatSeconds, localeOf, message, type Lang, type MessageKey, type Params } from './format.ts';

/**
 * Vietnamese and English: the browser's preference first, then the user's
 * choice (kept in this browser). Dates and times are shown in the user's own
 * time zone; numbers in the language's style.
 */

export type { Lang, MessageKey };

const STORAGE_KEY = 'vieneu-console-lang';
let lang: Lang = pickLanguage();
const listeners: Array<() => void> = [];

function pickLanguage(): Lang {
  const stored = safeStorage()?.getItem(STORAGE_KEY);
  if (stored === 'vi' || stored === 'en') return stored;
  for (const preferred of navigator.languages ?? [navigator.language]) {
    if (/^vi\b/i.test(preferred)) return 'vi';
    if (/^en\b/i.test(preferred)) return 'en';
  }
  return 'en';
}

function safeStorage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

export const currentLang = () => lang;

export function setLang(next: Lang): void {
  lang = next;
  safeStorage()?.setItem(STORAGE_KEY, next);
  document.documentElement.lang = next;
  listeners.forEach((l) => l());
}

export const onLangChange = (listener: () => void) => void listeners.push(listener);

/** The message in the current language, with its placeholders (and plural forms, format.ts) filled. */
export const t = (key: MessageKey, params: Params = {}): string => message(lang, key, params);

/** true for a key the messages have (for names built from API values, such as a status). */
export const hasMessage = (key: string): key is MessageKey => key in en;

const locale = () => localeOf(lang);

export const fmtNumber = (n: number | null | undefined, digits = 0): string => formatNumber(lang, n, digits);

/** An instant in the user's local time, with the zone named. */
export function fmtDateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  // dateStyle cannot be combined with timeZoneName: the fields are named one by one.
  return new Intl.DateTimeFormat(locale(), { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' }).format(new Date(iso));
}

/** A calendar day as `GET /usage` names it (YYYY-MM-DD, UTC), unchanged by time zones. */
export function fmtDay(day: string): string {
  return new Intl.DateTimeFormat(locale(), { dateStyle: 'medium', timeZone: 'UTC' }).format(new Date(`${day}T00:00:00Z`));
}

export const fmtSeconds = (seconds: number | null | undefined): string => formatSeconds(lang, seconds);

export const timeZoneName = () => Intl.DateTimeFormat().resolvedOptions().timeZone;
