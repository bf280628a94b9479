import { searchVoices } from '../../../../core/voice-search.ts';
import { field, h, replace, uid } from './dom.ts';
import { t } from './i18n.ts';

/**
 * Choosing a voice: a search box with the MCP `list_voices` rules (the same
 * code, core/voice-search.ts) over `GET /voices` (own clones included), and
 * the results as a radio group, which the keyboard already knows how to use.
 */

export interface Voice {
  id: string;
  name?: string | null;
  description?: string | null;
  gender?: string | null;
  region?: string | null;
  engine: string;
  kind: 'catalog' | 'cloned';
}

const LIMIT = 25;

function describe(v: Voice): string {
  const bits = [v.gender ? t(`voice.${v.gender}` as Parameters<typeof t>[0]) : null, v.region ? t(`voice.${v.region}` as Parameters<typeof t>[0]) : null, v.kind === 'cloned' ? t('voice.cloned') : null];
  return bits.filter(Boolean).join(' · ');
}

export function voicePicker(voices: Voice[], initial: string | null, onChange: (voice: Voice) => void): { element: HTMLElement; selected(): Voice | null } {
  let selected: Voice | null = voices.find((v) => v.id === initial) ?? voices[0] ?? null;
  const name = uid('voice');
  const search = h('input', { type: 'search', autocomplete: 'off', placeholder: t('playground.searchPlaceholder') });
  const status = h('p', { class: 'hint', 'aria-live': 'polite' });
  const list = h('div', { class: 'voice-list' });
  const legend = h('legend', {}, t('playground.voice'));

  function show(): void {
    const result = searchVoices(voices, search.value, LIMIT);
    const matches = result.matches.map((m) => ({ voice: m.voice, missing: m.missingWords }));
    // The chosen voice stays in the list (last) while the search leaves it out, so the choice is never hidden.
    if (selected && !matches.some((m) => m.voice.id === selected!.id)) matches.push({ voice: selected, missing: [] });
    status.textContent = search.value.trim() === '' ? t('playground.voiceCount', { count: voices.length })
      : result.complete ? t('playground.found', { count: result.total })
      : t('playground.closest', { count: result.matches.length });
    replace(list, matches.map(({ voice, missing }) => {
      const id = uid('v');
      const radio = h('input', { type: 'radio', name, id, value: voice.id, checked: voice.id === selected?.id });
      radio.addEventListener('change', () => {
        selected = voice;
        onChange(voice);
      });
      return h('div', { class: 'voice-option' }, radio,
        h('label', { for: id }, h('strong', {}, voice.name ?? voice.id), ' ', h('span', { class: 'muted' }, describe(voice)),
          voice.description ? h('span', { class: 'voice-desc' }, voice.description) : null,
          missing.length ? h('span', { class: 'voice-missing' }, t('playground.missing', { words: missing.join(', ') })) : null));
    }));
  }

  search.addEventListener('input', show);
  show();
  const element = h('fieldset', { class: 'voices' }, legend, field(t('playground.search'), search, t('playground.searchHint')), status, list);
  return { element, selected: () => selected };
}
