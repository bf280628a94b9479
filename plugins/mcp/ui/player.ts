import { viewPage } from './bridge.ts';

/** `ui://vieneu/player.html`: plays the audio of text_to_speech / get_speech_status, and follows a job until its link exists. */
export const playerHtml = viewPage('VieNeu player', `
<h1>VieNeu</h1>
<p id="status" class="muted">Waiting for the speech…</p>
<p id="input" class="muted"></p>
<audio id="audio" controls preload="auto" hidden></audio>
<p id="meta" class="muted"></p>
<p><button id="refresh" hidden>Check again</button> <a id="download" hidden target="_blank" rel="noopener noreferrer">Download</a></p>
`, `
const $ = (id) => document.getElementById(id);
let jobId = null, polls = 0, timer = null;
function show(result) {
  const data = (result && result.structuredContent) || {};
  if (result && result.isError) {
    $('status').textContent = (data.error && data.error.message) || 'The speech could not be made.';
    $('status').className = 'error';
    return;
  }
  jobId = data.jobId || jobId;
  if (data.status === 'completed' && data.audioUrl) {
    clearTimeout(timer);
    $('status').textContent = 'Ready' + (data.format ? ' (' + String(data.format).toUpperCase() + ')' : '');
    $('status').className = '';
    const audio = $('audio');
    if (audio.src !== data.audioUrl) audio.src = data.audioUrl;
    audio.hidden = false;
    $('download').href = data.audioUrl;
    $('download').hidden = false;
    $('refresh').hidden = true;
    const parts = [];
    if (typeof data.duration === 'number') parts.push(data.duration.toFixed(1) + ' s');
    if (data.voiceId) parts.push('voice ' + data.voiceId);
    parts.push('link valid 24 hours');
    $('meta').textContent = parts.join(' · ');
  } else if (data.status === 'failed') {
    $('status').textContent = 'The speech job failed: ' + (data.error || 'unknown error') + ' (tokens refunded).';
    $('status').className = 'error';
  } else if (jobId) {
    $('status').textContent = 'Rendering… (job ' + jobId + ')';
    $('refresh').hidden = false;
    if (polls++ < 40) timer = setTimeout(check, 3000);
  }
}
async function check() {
  if (!jobId) return;
  try { show(await vn.callTool('get_speech_status', { job_id: jobId })); } catch (err) { $('meta').textContent = String(err.message || err); }
}
$('refresh').addEventListener('click', () => { polls = 0; check(); });
vn.on('ui/notifications/tool-input', (p) => {
  const text = p.arguments && p.arguments.text;
  if (text) $('input').textContent = '“' + (text.length > 120 ? text.slice(0, 117) + '…' : text) + '”';
});
vn.on('ui/notifications/tool-result', show);
vn.on('ui/notifications/tool-cancelled', () => { $('status').textContent = 'Cancelled.'; });
vn.start('vieneu-player');
`);
