/**
 * Values published on `tts.job.events` (keyed by job id) when a `POST /tts`
 * job ends. Consumed by the job store, the usage aggregator and the webhook
 * dispatcher. The submitted text is never included.
 */
export interface JobEventBase {
  /** `evt_...`, stable per job and event type: receivers dedupe on it */
  eventId: string;
  jobId: string;
  accountId: string;
  keyId: string | null;
  voiceId: string;
  engine: string;
  characterCount: number;
  tokenCost: number;
  at: string;
}

export interface JobCompletedEvent extends JobEventBase {
  type: 'tts.job.completed';
  durationSeconds: number;
  processingTimeMs: number;
  /** blob key of the audio; download links are minted per delivery */
  audioKey: string;
}

export interface JobFailedEvent extends JobEventBase {
  type: 'tts.job.failed';
  error: { code: 'synthesis_failed' | 'synthesis_unavailable' | 'synthesis_timeout' | 'content_rejected' | 'quota_exceeded'; message: string };
  refunded: boolean;
}

export type JobEvent = JobCompletedEvent | JobFailedEvent;

export function jobEventId(jobId: string, type: JobEvent['type']): string {
  return `evt_${type === 'tts.job.completed' ? 'c' : 'f'}_${jobId}`;
}
