import type { JobRecord } from '../../core/ports/jobs.ts';
import type { DownloadLinks } from '../../core/downloads.ts';

/** Download links of jobs are valid 24 hours. */
export const JOB_LINK_TTL_SECONDS = 86_400;

export interface QueueInfo {
  position: number | null;
  renderMs: number | null;
  concurrency: number;
}

/** The TTS job resource of SPEC, as `GET /tts/{jobId}` shows it. */
export function jobView(job: JobRecord, downloads: DownloadLinks, queue: QueueInfo | null): Record<string, unknown> {
  const view: Record<string, unknown> = {
    jobId: job.id,
    status: job.status,
    voiceId: job.voiceId,
    textLength: job.textLength,
    createdAt: job.createdAt,
  };
  if (job.completedAt) view.completedAt = job.completedAt;
  if (job.status === 'completed' && job.audioKey) {
    const link = downloads.sign(job.audioKey, JOB_LINK_TTL_SECONDS, { job: job.id });
    view.audioUrl = link.url;
    view.audioUrlExpiresIn = link.expiresIn;
    view.duration = job.durationSeconds;
  }
  if (job.status === 'queued' && queue?.position) {
    view.queuePosition = queue.position;
    // Jobs ahead are rendered `concurrency` at a time; 3 s per job until real timings exist.
    const perJob = (queue.renderMs ?? 3000) / 1000;
    view.estimatedWaitSeconds = Math.ceil((queue.position * perJob) / Math.max(1, queue.concurrency));
  }
  if (job.status === 'failed') view.error = job.error ?? 'Synthesis failed';
  return view;
}
