import { ApiFailure, apiJson } from '../api.ts';
import { announce, h, notice, replace } from '../dom.ts';
import { fmtDateTime, fmtSeconds, hasMessage, t } from '../i18n.ts';
import { href, type Route } from '../router.ts';
import type { Cleanup } from '../page.ts';

/**
 * Audiobooks (SPEC `GET /audiobooks`, `GET /audiobooks/{id}`): the list, and
 * one book's chapters as they progress (refreshed every few seconds while it
 * renders), with a player for every finished chapter. The page exists only
 * where the audiobooks plugin answers.
 */

interface Chapter {
  index: number;
  title: string;
  status: string;
  characters: number;
  tokenCost: number | null;
  progress: Record<string, number> | null;
  durationSeconds: number | null;
  audioUrl: string | null;
  audioFormat: string | null;
  error: string | null;
}

interface Book {
  id: string;
  title: string;
  author: string | null;
  status: string;
  waitingReason: string | null;
  error: string | null;
  totals: { chapters: number; completedChapters: number; characters: number; estimatedTokens: number; tokensCharged: number; durationSeconds: number };
  chapters?: Chapter[];
  createdAt: string;
}

const ACTIVE = new Set(['queued', 'rendering']);
const REFRESH_MS = 5000;

/** Parts done of parts planned, whatever the two fields are called (SPEC does not name them). */
function progressText(p: Chapter['progress']): string | null {
  if (!p) return null;
  const done = p.partsDone ?? p.done;
  const total = p.partsPlanned ?? p.total;
  return typeof done === 'number' && typeof total === 'number' ? `${done}/${total}` : null;
}

const statusLabel = (status: string) => {
  const key = `books.status.${status}`;
  return hasMessage(key) ? t(key) : status;
};

async function renderList(root: HTMLElement): Promise<void> {
  const { items } = await apiJson<{ items: Book[] }>('/audiobooks?limit=50&page=1');
  root.append(h('h1', { tabindex: -1 }, t('books.title')), h('p', { class: 'lead' }, t('books.intro')),
    items.length === 0 ? h('p', {}, t('books.empty')) : h('ul', { class: 'books' }, items.map((b) => h('li', {},
      h('a', { href: href(`audiobooks/${encodeURIComponent(b.id)}`) }, b.title), b.author ? ` — ${b.author}` : '', ' ',
      h('span', { class: 'badge' }, statusLabel(b.status)), ' ',
      h('span', { class: 'hint' }, t('books.chaptersDone', { done: b.totals.completedChapters, total: b.totals.chapters }))))));
}

function chapterItem(c: Chapter): HTMLElement {
  const progress = progressText(c.progress);
  return h('li', { 'data-status': c.status, class: 'chapter' },
    h('div', {}, h('strong', {}, `${c.index}. ${c.title}`), ' — ', statusLabel(c.status), progress ? ` (${progress})` : '',
      c.durationSeconds ? ` · ${fmtSeconds(c.durationSeconds)}` : '', c.error ? h('span', { class: 'error-text' }, ` · ${c.error}`) : null),
    c.audioUrl ? h('audio', { controls: true, preload: 'none', src: c.audioUrl, 'aria-label': t('books.play', { title: c.title }) }) : null);
}

async function renderBook(root: HTMLElement, id: string): Promise<Cleanup> {
  const heading = h('h1', { tabindex: -1 }, t('books.title'));
  const body = h('div', {});
  root.append(h('p', {}, h('a', { href: href('audiobooks') }, t('books.back'))), heading, body);
  let timer: ReturnType<typeof setTimeout> | null = null;
  let completed = -1;
  let stopped = false;

  async function load(): Promise<void> {
    const book = await apiJson<Book>(`/audiobooks/${encodeURIComponent(id)}`);
    heading.textContent = book.author ? `${book.title} — ${book.author}` : book.title;
    const share = book.totals.chapters ? Math.round((book.totals.completedChapters / book.totals.chapters) * 100) : 0;
    replace(body,
      h('p', {}, h('span', { class: 'badge' }, statusLabel(book.status)), book.waitingReason ? ` ${t('books.waiting', { reason: book.waitingReason })}` : '', book.error ? h('span', { class: 'error-text' }, ` ${book.error}`) : null),
      h('div', { class: 'meter-row' }, h('progress', { max: 100, value: share, 'aria-label': t('books.progress') }),
        h('span', {}, t('books.chaptersDone', { done: book.totals.completedChapters, total: book.totals.chapters }))),
      h('p', { class: 'hint' }, t('books.totals', { chars: book.totals.characters, charged: book.totals.tokensCharged, estimated: book.totals.estimatedTokens, created: fmtDateTime(book.createdAt) })),
      h('ol', { class: 'chapters' }, (book.chapters ?? []).map(chapterItem)));
    if (completed >= 0 && book.totals.completedChapters > completed) announce(t('books.chapterDone', { done: book.totals.completedChapters, total: book.totals.chapters }));
    completed = book.totals.completedChapters;
    if (!stopped && ACTIVE.has(book.status)) timer = setTimeout(() => void load().catch(() => undefined), REFRESH_MS);
  }
  try {
    await load();
  } catch (err) {
    replace(body, notice('error', err instanceof ApiFailure && err.status === 404 ? t('books.notFound') : String((err as Error).message)));
  }
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}

export async function render(root: HTMLElement, route: Route): Promise<Cleanup | void> {
  return route.param ? renderBook(root, route.param) : renderList(root);
}
