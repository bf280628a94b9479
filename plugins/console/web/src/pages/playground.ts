import { countCharacters, priceTokens } from '../../../../../core/billing/pricing.ts';
import { ApiFailure, api, apiJson } from '../api.ts';
import { LivePlayer, parseWav, pcmToWav, readFrames, ulawToPcm } from '../audio.ts';
import { announce, busy, codeBlock, field, h, notice, replace } from '../dom.ts';
import { fmtNumber, fmtSeconds, t } from '../i18n.ts';
import { curlSnippet, nodeSnippet, pythonSnippet, type SpeechRequest } from '../snippets.ts';
import { voicePicker, type Voice } from '../voice-picker.ts';
import type { Cleanup } from '../page.ts';

/**
 * The voice playground: a voice (searched, previewed), text with cue tags,
 * the token price before sending, then the audio to play and download, and
 * the same request as curl and OpenAI-client code. WAV, PCM and mu-law are
 * spoken through `POST /tts/stream` (the stream route: audio plays while it
 * arrives, and the per-user stream limit applies to it); MP3 and Opus,
 * which the stream sends as separate small files, through
 * `POST /audio/speech` as one file.
 */

interface Engines {
  engines: Array<{ key: string; isDefault: boolean; billingMultiplier: number; sampleRate: number }>;
  globalMultiplier: number;
}

const FORMATS = ['wav', 'mp3', 'opus', 'pcm', 'ulaw'] as const;
type Format = (typeof FORMATS)[number];
const RATES = [8000, 16000, 22050, 24000, 44100, 48000];
const FIXED_RATE: Partial<Record<Format, number>> = { opus: 48000, ulaw: 8000 };
const STREAMED: Format[] = ['wav', 'pcm', 'ulaw'];
const MAX_CHARS = 50_000;
const MIME: Record<Format, string> = { wav: 'audio/wav', mp3: 'audio/mpeg', opus: 'audio/ogg', pcm: 'application/octet-stream', ulaw: 'audio/basic' };

/**
 * The console's sentence for a refusal it knows. The API's own text is left
 * out: it is English, and it speaks to a key's owner ("the grant behind this
 * key"), while the console's user sent no key.
 */
export function speakRefusal(err: unknown): string {
  if (!(err instanceof ApiFailure)) return (err as Error).name === 'AbortError' ? t('playground.stopped') : t('common.error', { message: (err as Error).message });
  const known: Record<string, Parameters<typeof t>[0]> = {
    STREAM_CONCURRENCY: 'playground.streamLimit', STREAM_BUSY: 'playground.streamBusy', GRANT_TOKENS_EXHAUSTED: 'playground.noTokens',
    GRANT_INACTIVE: 'playground.noPlan', GRANT_EXPIRED: 'playground.noPlan', GRANT_DAILY_LIMIT: 'playground.dailyCap', GRANT_WEEKLY_LIMIT: 'playground.weeklyCap',
    // POST /audio/speech's compatible refusal does not tell a spent plan from none at all.
    insufficient_quota: 'playground.noPlan', rate_limit_exceeded: 'playground.rateLimited', RATE_LIMITED: 'playground.rateLimited',
  };
  const key = err.code ? known[err.code] : undefined;
  return key ? t(key) : t('common.error', { message: err.message });
}

export async function render(root: HTMLElement): Promise<Cleanup> {
  const [engines, { voices }, tags] = await Promise.all([
    apiJson<Engines>('/engines'), apiJson<{ voices: Voice[] }>('/voices'), apiJson<{ cueTags: string[] }>('/emotion-tags'),
  ]);
  const engine = engines.engines.find((e) => e.isDefault) ?? engines.engines[0];
  const player = new LivePlayer();
  let controller: AbortController | null = null;
  let objectUrl: string | null = null;

  const text = h('textarea', { rows: 6, maxlength: MAX_CHARS, spellcheck: true }, t('playground.defaultText'));
  const estimate = h('p', { class: 'estimate', 'aria-live': 'polite', id: 'estimate' });
  const format = h('select', {}, FORMATS.map((f) => h('option', { value: f }, f.toUpperCase())));
  const rate = h('select', {}, RATES.map((r) => h('option', { value: r, selected: r === 48000 }, `${fmtNumber(r)} Hz`)));
  const speed = h('input', { type: 'number', min: 0.5, max: 2, step: 0.1, value: 1, inputmode: 'decimal' });
  const live = h('input', { type: 'checkbox', checked: true, id: 'live-play' });
  const speak = h('button', { type: 'submit', class: 'primary' }, t('playground.speak'));
  const stop = h('button', { type: 'button', class: 'secondary', disabled: true }, t('playground.stop'));
  const message = h('div', {});
  const output = h('section', { class: 'card output', 'aria-labelledby': 'result-heading', hidden: true });
  const snippets = h('div', { class: 'snippets' });
  const previewAudio = h('audio', { class: 'preview', controls: true, hidden: true, 'aria-label': t('playground.previewAudio') });

  const picker = voicePicker(voices, null, () => updateSnippets());
  const preview = h('button', { type: 'button', class: 'secondary small' });
  const sampleText = () => t('playground.sample');
  const price = (s: string) => priceTokens({ characters: countCharacters(s), engineMultiplier: engine.billingMultiplier, globalMultiplier: engines.globalMultiplier, aiRefine: false, aiRefineSurchargePerChar: 0 });
  preview.textContent = t('playground.preview', { tokens: price(sampleText()) });

  const cueButtons = tags.cueTags.map((tag) => {
    const b = h('button', { type: 'button', class: 'secondary small', 'aria-label': t('playground.insertTag', { tag }) }, tag);
    b.addEventListener('click', () => {
      text.setRangeText(` ${tag} `, text.selectionStart, text.selectionEnd, 'end');
      text.focus();
      update();
    });
    return b;
  });

  function request(): SpeechRequest {
    const f = format.value as Format;
    return { input: text.value, voice: picker.selected()?.id ?? '', format: f, sampleRate: FIXED_RATE[f] ?? Number(rate.value), speed: Math.min(2, Math.max(0.5, Number(speed.value) || 1)) };
  }

  function update(): void {
    const chars = countCharacters(text.value);
    estimate.textContent = chars > MAX_CHARS ? t('playground.tooLong', { max: fmtNumber(MAX_CHARS) })
      : t('playground.estimate', { tokens: price(text.value), chars, multiplier: `${engine.billingMultiplier} × ${engines.globalMultiplier}` });
    const fixed = FIXED_RATE[format.value as Format];
    rate.disabled = fixed !== undefined;
    if (fixed) rate.value = String(fixed);
    updateSnippets();
  }

  function updateSnippets(): void {
    const r = request();
    const labels = { copy: t('common.copy'), copied: t('common.copied') };
    replace(snippets,
      h('p', { class: 'hint' }, t(STREAMED.includes(r.format as Format) ? 'playground.snippetStreamNote' : 'playground.snippetNote')),
      codeBlock('curl', curlSnippet(location.origin, r), labels),
      codeBlock(t('playground.python'), pythonSnippet(location.origin, r), labels),
      codeBlock(t('playground.node'), nodeSnippet(location.origin, r), labels));
  }

  function showResult(file: Blob, playable: Blob, r: SpeechRequest, route: string): void {
    if (objectUrl) URL.revokeObjectURL(objectUrl);
    objectUrl = URL.createObjectURL(playable);
    const fileUrl = playable === file ? objectUrl : URL.createObjectURL(file);
    const audio = h('audio', { controls: true, src: objectUrl, preload: 'auto', id: 'result-audio', 'aria-label': t('playground.resultAudio') });
    const duration = h('span', { class: 'duration' });
    audio.addEventListener('loadedmetadata', () => (duration.textContent = t('playground.duration', { duration: fmtSeconds(audio.duration) })));
    const name = `vieneu-${r.voice}.${r.format}`;
    replace(output,
      h('h2', { id: 'result-heading', tabindex: -1 }, t('playground.result')),
      audio,
      h('p', {}, duration, ' · ', `${r.format.toUpperCase()} ${fmtNumber(r.sampleRate)} Hz · ${fmtNumber(file.size)} ${t('playground.bytes')} · ${route}`),
      h('a', { class: 'button secondary', href: fileUrl, download: name, id: 'download' }, t('playground.download', { name })),
      r.format === 'pcm' || r.format === 'ulaw' ? h('p', { class: 'hint' }, t('playground.rawNote')) : null);
    output.hidden = false;
    announce(t('playground.ready'));
  }

  async function speakStream(r: SpeechRequest, signal: AbortSignal): Promise<void> {
    const f = r.format as Format;
    const res = await api('/tts/stream', { method: 'POST', signal, json: { text: r.input, voiceId: r.voice, speed: r.speed, outputFormat: f, sampleRate: r.sampleRate } });
    const rateHeard = Number(res.headers.get('x-sample-rate')) || r.sampleRate;
    const pcm: Uint8Array[] = [];
    const raw: Uint8Array[] = [];
    if (live.checked) player.start();
    const complete = await readFrames(res.body!, (frame) => {
      let samples = frame;
      if (f === 'wav') {
        const info = parseWav(frame);
        if (!info || info.dataLength === 0) return; // a heartbeat: a WAV with no samples
        samples = frame.subarray(info.dataOffset, info.dataOffset + info.dataLength);
      } else {
        raw.push(frame);
        if (f === 'ulaw') samples = ulawToPcm(frame);
      }
      pcm.push(samples);
      player.push(samples, rateHeard);
    });
    if (!complete) throw new Error(t('playground.cutShort'));
    if (pcm.length === 0) throw new Error(t('playground.noAudio'));
    const playable = pcmToWav(pcm, rateHeard);
    showResult(f === 'wav' ? playable : new Blob(raw.map((c) => c.slice().buffer), { type: MIME[f] }), playable, r, 'POST /tts/stream');
  }

  async function speakFile(r: SpeechRequest, signal: AbortSignal): Promise<void> {
    const res = await api('/audio/speech', { method: 'POST', signal, json: { input: r.input, voice: r.voice, response_format: r.format, sample_rate: r.sampleRate, speed: r.speed } });
    const blob = await res.blob();
    showResult(blob, blob, r, 'POST /audio/speech');
  }

  const form = h('form', { class: 'playground' },
    h('div', { class: 'card' }, picker.element, h('div', { class: 'preview-row' }, preview, previewAudio)),
    h('div', { class: 'card' },
      field(t('playground.text'), text, t('playground.textHint')),
      h('div', { class: 'tags', role: 'group', 'aria-label': t('playground.tags') }, h('span', { class: 'hint' }, t('playground.tags')), cueButtons),
      estimate,
      h('div', { class: 'row' }, field(t('playground.format'), format), field(t('playground.rate'), rate), field(t('playground.speed'), speed)),
      h('div', { class: 'check' }, live, h('label', { for: 'live-play' }, t('playground.live'))),
      h('div', { class: 'actions' }, speak, stop),
      message),
    output,
    h('section', { class: 'card', 'aria-labelledby': 'code-heading' }, h('h2', { id: 'code-heading' }, t('playground.code')), snippets));

  preview.addEventListener('click', () => void busy(preview, async () => {
    const voice = picker.selected();
    if (!voice) return;
    try {
      const res = await api('/audio/speech', { method: 'POST', json: { input: sampleText(), voice: voice.id, response_format: 'mp3' } });
      if (previewAudio.src) URL.revokeObjectURL(previewAudio.src);
      previewAudio.src = URL.createObjectURL(await res.blob());
      previewAudio.hidden = false;
      await previewAudio.play().catch(() => undefined);
    } catch (err) {
      replace(message, notice('error', speakRefusal(err)));
    }
  }));
  text.addEventListener('input', update);
  format.addEventListener('change', update);
  rate.addEventListener('change', update);
  speed.addEventListener('change', update);
  stop.addEventListener('click', () => controller?.abort());
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const r = request();
    if (!r.input.trim()) return replace(message, notice('error', t('playground.empty')));
    if (countCharacters(r.input) > MAX_CHARS) return replace(message, notice('error', t('playground.tooLong', { max: fmtNumber(MAX_CHARS) })));
    replace(message, h('p', { class: 'loading' }, t('playground.speaking')));
    controller = new AbortController();
    stop.disabled = false;
    void busy(speak, async () => {
      try {
        await (STREAMED.includes(r.format as Format) ? speakStream(r, controller!.signal) : speakFile(r, controller!.signal));
        replace(message);
        (output.querySelector('h2') as HTMLElement | null)?.focus();
      } catch (err) {
        player.stop();
        replace(message, notice('error', speakRefusal(err)));
      } finally {
        stop.disabled = true;
        controller = null;
      }
    });
  });

  root.append(h('h1', { tabindex: -1 }, t('playground.title')), h('p', { class: 'lead' }, t('playground.intro')), form);
  update();
  return () => {
    controller?.abort();
    player.stop();
    if (objectUrl) URL.revokeObjectURL(objectUrl);
  };
}
