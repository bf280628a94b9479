import Joi from 'joi';

/**
 * The plugin's own settings (validated at start-up with core's). Production
 * values are the defaults; tests shrink the waits so a whole book, its
 * retries and its mastering fallback run in seconds.
 */
export interface AudiobookConfig {
  /** characters per render part: about 3 minutes of speech at 15 characters a second */
  AUDIOBOOK_PART_CHARS: number;
  /** chapters rendering at once across the inference fleet (render slots) */
  AUDIOBOOK_RENDER_SLOTS: number;
  /** chapter renders at once in one inference process */
  AUDIOBOOK_RENDER_CONCURRENCY: number;
  /** how often the scheduler and the mastering worker look at the books */
  AUDIOBOOK_TICK_MS: number;
  /** wait before a failed chapter is rendered again */
  AUDIOBOOK_RETRY_SECONDS: number;
  /** a chapter without progress this long counts as a failed attempt */
  AUDIOBOOK_STALL_SECONDS: number;
  /** an inference worker's claim on a chapter, renewed while it renders */
  AUDIOBOOK_LEASE_SECONDS: number;
  /** a book waiting on `quota` tries to pay again this often */
  AUDIOBOOK_QUOTA_RETRY_SECONDS: number;
  /** growing waits between mastering attempts (comma-separated seconds); after the last, WAV is delivered */
  AUDIOBOOK_MASTER_RETRY_SECONDS: string;
  /** a chapter left `charging` by a crashed scheduler is settled from the ledger after this long */
  AUDIOBOOK_CHARGE_RECOVERY_SECONDS: number;
}

export const audiobookConfigSchema = Joi.object<AudiobookConfig>({
  AUDIOBOOK_PART_CHARS: Joi.number().integer().min(20).max(60000).default(2700),
  AUDIOBOOK_RENDER_SLOTS: Joi.number().integer().min(1).max(256).default(2),
  AUDIOBOOK_RENDER_CONCURRENCY: Joi.number().integer().min(1).max(16).default(1),
  AUDIOBOOK_TICK_MS: Joi.number().integer().min(10).max(60000).default(2000),
  AUDIOBOOK_RETRY_SECONDS: Joi.number().min(0).max(86400).default(300),
  AUDIOBOOK_STALL_SECONDS: Joi.number().min(1).max(86400).default(2700),
  AUDIOBOOK_LEASE_SECONDS: Joi.number().min(1).max(3600).default(60),
  AUDIOBOOK_QUOTA_RETRY_SECONDS: Joi.number().min(0.1).max(86400).default(60),
  AUDIOBOOK_MASTER_RETRY_SECONDS: Joi.string().pattern(/^\d+(\.\d+)?(,\d+(\.\d+)?)*$/).default('60,120,240,480,900,1800')
    .messages({ 'string.pattern.base': '"AUDIOBOOK_MASTER_RETRY_SECONDS" must be comma-separated seconds, e.g. 60,120,240' }),
  AUDIOBOOK_CHARGE_RECOVERY_SECONDS: Joi.number().min(1).max(86400).default(600),
});

/** The settings as the workers use them (milliseconds, parsed lists). */
export interface AudiobookSettings {
  partChars: number;
  renderSlots: number;
  renderConcurrency: number;
  tickMs: number;
  retryMs: number;
  stallMs: number;
  leaseMs: number;
  quotaRetryMs: number;
  masterRetryMs: number[];
  chargeRecoveryMs: number;
}

export function settingsOf(config: AudiobookConfig): AudiobookSettings {
  return {
    partChars: config.AUDIOBOOK_PART_CHARS,
    renderSlots: config.AUDIOBOOK_RENDER_SLOTS,
    renderConcurrency: config.AUDIOBOOK_RENDER_CONCURRENCY,
    tickMs: config.AUDIOBOOK_TICK_MS,
    retryMs: config.AUDIOBOOK_RETRY_SECONDS * 1000,
    stallMs: config.AUDIOBOOK_STALL_SECONDS * 1000,
    leaseMs: config.AUDIOBOOK_LEASE_SECONDS * 1000,
    quotaRetryMs: config.AUDIOBOOK_QUOTA_RETRY_SECONDS * 1000,
    masterRetryMs: config.AUDIOBOOK_MASTER_RETRY_SECONDS.split(',').map((s) => Number(s) * 1000),
    chargeRecoveryMs: config.AUDIOBOOK_CHARGE_RECOVERY_SECONDS * 1000,
  };
}
