import type { Charge } from '../../../core/ports/charge.ts';

/**
 * What the audiobook store keeps. Books and chapters are small records; a
 * chapter's script lives in its own segment rows so that a 1,500,000-character
 * book is never read whole: the service reads one chapter's segments at a time.
 */
export type BookStatus = 'draft' | 'queued' | 'rendering' | 'completed' | 'partial' | 'failed' | 'cancelled';
export type ChapterStatus = 'pending' | 'rendering' | 'rendered' | 'mastering' | 'completed' | 'failed' | 'cancelled';
export type WaitingReason = 'gpu_busy' | 'quota' | 'queue_full';
/**
 * Where a `rendering` chapter is in its dispatch: being charged, published on
 * `audiobook.chapters` and not yet taken, taken by an inference worker, or
 * handed back between parts because API work arrived (it keeps its charge).
 */
export type Dispatch = 'charging' | 'queued' | 'running' | 'paused';

/** Books that are started and may still get chapters rendered. */
export const STARTED: BookStatus[] = ['queued', 'rendering'];
/** Chapters holding a render slot or waiting to get one back. */
export const IN_FLIGHT: ChapterStatus[] = ['rendering'];

export interface CastEntry {
  /** character name as segments use it */
  speaker: string;
  /** catalogue voice id */
  voiceId: string;
}

export interface BookRecord {
  id: string;
  accountId: string;
  title: string;
  author: string | null;
  engine: string;
  narratorVoice: string;
  cast: CastEntry[];
  status: BookStatus;
  waitingReason: WaitingReason | null;
  error: string | null;
  /** the key (and its grant) that last started the book pays for its chapters */
  payerKeyId: string;
  payerGrantId: string;
  /** bumped by every chapter add, so concurrent adds to one book are serialised */
  version: number;
  /** how many times the book was started */
  run: number;
  /** last time one of its chapters got a render slot (books take turns) */
  lastTurnAt: string | null;
  /** last start */
  queuedAt: string | null;
  /** when waiting on `quota`: next time the scheduler tries to charge again */
  quotaRetryAt: string | null;
  createdAt: string;
  completedAt: string | null;
}

/** One finished part of a chapter's render (about 3 minutes of speech), kept for reuse on retry. */
export interface PartRecord {
  /** 16-bit samples at 48 kHz */
  samples: number;
  renderedAt: string;
  /** render attempt that produced it */
  attempt: number;
}

export interface ChapterRecord {
  bookId: string;
  accountId: string;
  /** 1-based */
  index: number;
  title: string;
  status: ChapterStatus;
  /** NFC characters of the title and every segment (what is billed) */
  characters: number;
  /** segment count */
  segments: number;
  /** hash of the title and the script, to refuse a chapter identical to the last */
  contentHash: string;
  /** render parts the script is cut into */
  partsPlanned: number;
  parts: Array<PartRecord | null>;
  /** render attempts charged so far (each starts with a charge) */
  attempt: number;
  dispatch: Dispatch | null;
  /** bumped at every publish; a message for another value is stale */
  dispatchSeq: number;
  leaseOwner: string | null;
  leaseUntil: string | null;
  lastProgressAt: string | null;
  /** the live charge of the current or finished attempt; null when none */
  charge: Charge | null;
  /** a failed attempt's charge whose refund is still to be made (an outbox of one) */
  refundDue: Charge | null;
  /** failed attempts since the last start */
  failures: number;
  retryAt: string | null;
  error: string | null;
  masterAttempts: number;
  masterRetryAt: string | null;
  audioKey: string | null;
  audioFormat: 'mp3' | 'wav' | null;
  durationSeconds: number | null;
  createdAt: string;
  startedAt: string | null;
  renderedAt: string | null;
  completedAt: string | null;
}

export interface SegmentRecord {
  /** 0-based position in the chapter */
  position: number;
  /** cast speaker; null is narration */
  speaker: string | null;
  text: string;
  /** a scene change comes before this segment (2 s of silence instead of 0.6 s) */
  sceneBreak: boolean;
}

/** A finished chapter in the account's library. */
export interface LibraryEntry {
  /** `<bookId>:<index>` */
  id: string;
  accountId: string;
  bookId: string;
  bookTitle: string;
  author: string | null;
  chapterIndex: number;
  title: string;
  audioKey: string;
  audioFormat: 'mp3' | 'wav';
  durationSeconds: number;
  completedAt: string;
}

export interface BookNotification {
  /** derived from the book and its run, so a repeated write is harmless */
  id: string;
  accountId: string;
  kind: 'audiobook.completed' | 'audiobook.partial' | 'audiobook.failed';
  message: string;
  bookId: string;
  createdAt: string;
}
