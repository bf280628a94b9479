import type { DeliveryEvent, WebhookTestEvent } from '../../core/ports/webhooks.ts';

/** SPEC "Webhook events": the body a receiver gets, snake_case, one `attempt` per HTTP try. */
export const WEBHOOK_API_VERSION = '2026-09-01';

/** One hour: SPEC "Limits", webhook `audio_url`. */
export const AUDIO_URL_TTL_SECONDS = 3600;

export interface AudioLink {
  url: string;
  expiresAt: string;
}

export interface WebhookBody {
  id: string;
  type: DeliveryEvent['type'];
  api_version: string;
  created: number;
  attempt: number;
  data: Record<string, unknown>;
}

/** `audio` is minted for this attempt by the caller; it is required for a completed event. */
export function buildWebhookBody(event: DeliveryEvent, attempt: number, audio: AudioLink | null): WebhookBody {
  if (event.type === 'webhook.test') return testBody(event, attempt);
  const common = {
    job_id: event.jobId,
    voice_id: event.voiceId,
    engine: event.engine,
    character_count: event.characterCount,
    token_cost: event.tokenCost,
  };
  let data: Record<string, unknown>;
  if (event.type === 'tts.job.completed') {
    if (!audio) throw new Error('a completed event needs an audio link minted for the attempt');
    data = {
      ...common,
      status: 'completed',
      duration_seconds: event.durationSeconds,
      processing_time_ms: event.processingTimeMs,
      audio_url: audio.url,
      audio_url_expires_at: audio.expiresAt,
    };
  } else {
    data = {
      ...common,
      status: 'failed',
      error: { code: event.error.code, message: event.error.message },
      refunded: event.refunded,
    };
  }
  return {
    id: event.eventId,
    type: event.type,
    api_version: WEBHOOK_API_VERSION,
    created: Math.floor(Date.parse(event.at) / 1000),
    attempt,
    data,
  };
}

/** The body of a test event: the same envelope and signature as job events, no job. */
function testBody(event: WebhookTestEvent, attempt: number): WebhookBody {
  return {
    id: event.eventId,
    type: event.type,
    api_version: WEBHOOK_API_VERSION,
    created: Math.floor(Date.parse(event.at) / 1000),
    attempt,
    data: {
      endpoint_id: event.endpointId,
      message: 'A test event: your endpoint received and can verify a signed delivery. No job is involved.',
    },
  };
}
