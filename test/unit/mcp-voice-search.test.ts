import test from 'ava';
import { CATALOGUE } from '../../config/voices.ts';
import { parseQuery, searchVoices, type SearchableVoice } from '../../core/voice-search.ts';

/** SPEC MCP server, `list_voices` search rules, each proven on the real catalogue (plus two made-up voices where a rule needs one). */

const voices: SearchableVoice[] = CATALOGUE.map(({ id, name, description, gender, region }) => ({ id, name, description, gender, region }));
const ids = (query: string, list: SearchableVoice[] = voices) => searchVoices(list, query, 25).matches.map((m) => m.voice.id);

test('gender and region terms come from the voice fields', (t) => {
  t.deepEqual(ids('nữ'), ['vi-north-female-mai', 'vi-central-female-huong', 'vi-south-female-lan']);
  t.deepEqual(ids('female'), ids('nữ'));
  t.deepEqual(ids('miền Nam'), ['vi-south-female-lan', 'vi-south-male-nam']);
  t.deepEqual(ids('giọng nữ miền Bắc'), ['vi-north-female-mai']);
  t.deepEqual(ids('male central'), ['vi-central-male-hung']);
  // The description says "nữ" and "miền Nam", the fields say otherwise: the fields win.
  const misleading: SearchableVoice[] = [
    { id: 'clone_1', name: 'Bé Na', description: 'giọng nữ miền Nam của tôi', gender: null, region: null },
    { id: 'x-voice', name: 'Thu', description: 'Người miền Nam sống ở Hà Nội', gender: 'female', region: 'north' },
  ];
  t.deepEqual(ids('nữ', misleading), ['x-voice']);
  t.deepEqual(ids('miền nam', misleading), []);
  t.deepEqual(ids('miền bắc', misleading), ['x-voice']);
});

test('other words match whole words of id, name or description, ignoring case', (t) => {
  t.deepEqual(ids('TIN'), ['vi-north-female-mai']);
  t.deepEqual(ids('SÁCH'), ['vi-north-male-minh']);
  t.deepEqual(ids('minh'), ['vi-north-male-minh'], 'a word of the id and the name');
  t.deepEqual(ids('ti'), [], 'a part of a word is not a word');
});

test('diacritics in a query must match', (t) => {
  t.deepEqual(ids('trầm'), ['vi-north-male-minh']);
  t.deepEqual(ids('trâm'), []);
  t.deepEqual(ids('ấm'), ['vi-north-male-minh']);
  t.deepEqual(ids('âm'), []);
  t.deepEqual(ids('nu'), [], 'a short word without diacritics is not "nữ"');
});

test('from 4 letters a diacritic-free word also matches as a word prefix', (t) => {
  t.deepEqual(ids('huong'), ['vi-central-female-huong']);
  t.deepEqual(ids('tram'), ['vi-north-male-minh']);
  t.deepEqual(ids('tuoi'), ['vi-south-female-lan']);
  t.deepEqual(ids('chac'), ['vi-central-male-hung']);
  t.deepEqual(ids('than'), ['vi-south-male-nam'], '"thân" and "thiện" begin with it once diacritics are gone');
  t.deepEqual(ids('nhe'), [], 'three letters are not enough for a prefix ("nhẹ")');
});

test('filler words are ignored', (t) => {
  t.deepEqual(parseQuery('Tìm giùm một giọng đọc tin tức').map((x) => x.text), ['giùm', 'tin', 'tức']);
  t.deepEqual(ids('giọng đọc tin tức'), ['vi-north-female-mai']);
  t.deepEqual(ids('please find me a voice for sách'), ['vi-north-male-minh']);
});

test('an exact voice name ranks first', (t) => {
  t.deepEqual(ids('Nam'), ['vi-south-male-nam', 'vi-north-male-minh', 'vi-central-male-hung']);
  const mai = searchVoices(voices, 'giọng Mai', 25).matches;
  t.is(mai[0].voice.id, 'vi-north-female-mai');
  t.true(mai[0].exactName);
  t.is(searchVoices(voices, 'Hương', 25).matches[0].voice.id, 'vi-central-female-huong');
  t.is(searchVoices(voices, 'huong', 25).matches[0].exactName, true, 'the name without its diacritics is still the name');
});

test('when no voice has every word, the closest come back with each missing word listed', (t) => {
  const result = searchVoices(voices, 'nữ trầm', 25);
  t.false(result.complete);
  t.deepEqual(result.terms, ['nữ', 'trầm']);
  t.deepEqual(result.matches.map((m) => [m.voice.id, m.missingWords]), [
    ['vi-north-female-mai', ['trầm']],
    ['vi-north-male-minh', ['nữ']],
    ['vi-central-female-huong', ['trầm']],
    ['vi-south-female-lan', ['trầm']],
  ]);
  const closer = searchVoices(voices, 'nữ miền Trung trầm', 25);
  t.false(closer.complete);
  t.deepEqual(closer.matches[0], { voice: voices[2], missingWords: ['trầm'], exactName: false }, 'fewest missing words first');
  const none = searchVoices(voices, 'robot', 25);
  t.deepEqual([none.complete, none.matches], [false, []]);
});

test('limit cuts the list, and no search lists every voice', (t) => {
  t.is(searchVoices(voices, null, 25).matches.length, 6);
  t.is(searchVoices(voices, '', 2).matches.length, 2);
  t.is(searchVoices(voices, 'nữ', 1).total, 3);
});
