import type { AuthContext } from '../../core/http/auth.ts';
import type { BillingService } from '../../core/billing/service.ts';
import type { VoiceCatalog } from '../../core/catalog.ts';
import type { DownloadLinks } from '../../core/downloads.ts';
import type { Documents } from '../../core/ports/documents.ts';
import { DomainError } from '../../core/errors.ts';
import type { AudiobookStore } from './store/port.ts';
import { STARTED, type BookRecord, type CastEntry } from './store/records.ts';
import type { AudiobookSettings } from './config.ts';
import { chapterCharsMax, grantBudgets } from './weighing.ts';
import type { ViewContext } from './view.ts';
import type { CastInput } from './schemas.ts';

/** What the route logic shares: the services it reads, and the checks every route makes. */
export interface RouteDeps {
  store: AudiobookStore;
  catalog: VoiceCatalog;
  billing: BillingService;
  documents: Documents;
  downloads: DownloadLinks;
  settings: AudiobookSettings;
}

/** SPEC: audiobook operations take live keys only. */
export function requireLiveKey(auth: AuthContext): void {
  if (auth.keyKind !== 'live') {
    throw new DomainError('invalid', 'Audiobooks need a live key (vn_sk_…); test keys cannot create or render books.', { code: 'live_key_required' });
  }
}

/** The caller's book; another account's book is 404 like a missing one. */
export async function ownBook(store: AudiobookStore, bookId: string, accountId: string): Promise<BookRecord> {
  const book = await store.getBook(bookId);
  if (!book || book.accountId !== accountId) throw new DomainError('not_found', `Audiobook ${bookId} not found.`, { code: 'book_not_found' });
  return book;
}

/** Tokens a chapter of `characters` costs on `engine` (never with aiRefine). */
export const pricer = (billing: BillingService, engine: string) => (characters: number) => billing.priceCharacters({ characters, engine, aiRefine: false });

/** The longest chapter the caller's plans can render, and what views need. */
export async function viewContextFor(deps: RouteDeps, auth: AuthContext, engine: string, withLinks: boolean): Promise<ViewContext> {
  const priceOf = pricer(deps.billing, engine);
  const [budgets, startedBooks] = await Promise.all([
    grantBudgets(deps.documents, { accountId: auth.accountId, grantId: auth.grantId }, engine),
    deps.store.countBooksInStatus(STARTED),
  ]);
  return { downloads: deps.downloads, priceOf, chapterCharsMax: chapterCharsMax(budgets, priceOf), startedBooks, withLinks };
}

/** Catalogue voices of the book's engine only; clones are refused (400). */
export async function resolveCast(catalog: VoiceCatalog, cast: CastInput[], engine: string, accountId: string): Promise<CastEntry[]> {
  const out: CastEntry[] = [];
  for (const [i, entry] of cast.entries()) {
    const voice = await catalog.resolve({ voice: entry.voiceId, engine, accountId, allowClones: false, param: `cast[${i}].voiceId` });
    out.push({ speaker: entry.speaker, voiceId: voice.id });
  }
  return out;
}
