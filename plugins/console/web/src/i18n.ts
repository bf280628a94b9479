import { en, type Messages } from './messages-en.ts';
import { vi } from './messages-vi.ts';

/**
 * Vietnamese and English: the browser's preference first, then the user's
 * choice (kept in this browser). Dates and times are shown in the user's own
 * time zone; numbers in the language's style.
 */

export type Lang = 'vi' | 'en';
export type MessageKey = keyof Messages;

const STORAGE_KEY = 'vieneu-console-lang';
const dictionaries: Record<Lang, Messages> = { en, vi };
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

/** The message in the current language, with `{name}` placeholders filled. */
export function t(key: MessageKey, params: Record<string, string | number> = {}): string {
  const text = dictionaries[lang][key] ?? en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}

/** true for a key the messages have (for names built from API values, such as a status). */
export const hasMessage = (key: string): key is MessageKey => key in en;

const locale = () => (lang === 'vi' ? 'vi-VN' : 'en-GB');

export function fmtNumber(n: number | null | undefined, digits = 0): string {
  if (n === null || n === undefined || Number.isNaN(n)) return '—';
  return new Intl.NumberFormat(locale(), { maximumFractionDigits: digits }).format(n);
}

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

export function fmtSeconds(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  if (seconds < 60) return `${fmtNumber(seconds, 1)} s`;
  const m = Math.floor(seconds / 60);
  return `${m} min ${fmtNumber(seconds - m * 60, 0)} s`;
}

export const timeZoneName = () => Intl.DateTimeFormat().resolvedOptions().timeZone;
