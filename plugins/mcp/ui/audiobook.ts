import { viewPage } from './bridge.ts';

/** `ui://vieneu/audiobook.html`: a book's progress, chapter by chapter, with players for finished chapters. */
export const audiobookHtml = viewPage('VieNeu audiobook', `
<h1 id="title">Audiobook</h1>
<p id="status" class="muted">Waiting for the book…</p>
<div class="bar" role="progressbar" aria-valuemin="0" aria-valuemax="100"><div id="progress" style="width:0%"></div></div>
<p id="totals" class="muted"></p>
<ol id="chapters"></ol>
<p><button id="refresh">Refresh</button></p>
`, `
const $ = (id) => document.getElementById(id);
let bookId = null, polls = 0, timer = null;
function render(result) {
  const data = (result && result.structuredContent) || {};
  if (result && result.isError) { $('status').textContent = (data.error && data.error.message) || 'Error'; $('status').className = 'error'; return; }
  const book = data.book;
  if (!book) return;
  bookId = book.id;
  $('title').textContent = book.title + (book.author ? ' — ' + book.author : '');
  $('status').textContent = 'Status: ' + book.status + (book.waitingReason ? ' (waiting: ' + book.waitingReason + ')' : '');
  $('status').className = book.status === 'failed' ? 'error' : 'muted';
  const t = book.totals || {};
  const chapters = book.chapters || [];
  const total = t.chapters || chapters.length;
  const done = t.completedChapters || 0;
  const pct = total ? Math.round((100 * done) / total) : 0;
  $('progress').style.width = pct + '%';
  $('progress').parentElement.setAttribute('aria-valuenow', String(pct));
  $('totals').textContent = done + '/' + total + ' chapters · ' + (t.tokensCharged || 0) + ' tokens charged · ~' + (t.estimatedTokens || 0) + ' to go';
  const list = $('chapters');
  list.replaceChildren();
  for (const c of chapters) {
    const li = document.createElement('li');
    li.dataset.status = c.status;
    const label = document.createElement('span');
    label.textContent = (c.title || 'Chapter ' + c.index) + ' — ' + c.status + (c.progress && c.progress.total ? ' (' + c.progress.done + '/' + c.progress.total + ')' : '');
    li.append(label);
    if (c.audioUrl) {
      const audio = document.createElement('audio');
      audio.controls = true; audio.preload = 'none'; audio.src = c.audioUrl;
      li.append(audio);
    }
    list.append(li);
  }
  clearTimeout(timer);
  if ((book.status === 'queued' || book.status === 'rendering') && polls++ < 60) timer = setTimeout(refresh, 5000);
}
async function refresh() {
  if (!bookId) return;
  try { render(await vn.callTool('get_audiobook', { book_id: bookId })); } catch (err) { $('totals').textContent = String(err.message || err); }
}
$('refresh').addEventListener('click', () => { polls = 0; refresh(); });
vn.on('ui/notifications/tool-input', (p) => { if (p.arguments && p.arguments.book_id) bookId = p.arguments.book_id; });
vn.on('ui/notifications/tool-result', render);
vn.start('vieneu-audiobook');
`);
