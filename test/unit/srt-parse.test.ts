import test from 'ava';
import { decodeSrt, parseSrt, SrtError } from '../../plugins/srt/parse.ts';

const SAMPLE = [
  '1', '00:00:01,000 --> 00:00:02,500', '<i>Xin chào</i> các bạn', '',
  '2', '00:00:03,000 --> 00:00:05,000', 'Dòng thứ nhất', '<b>dòng thứ hai</b>', '',
  '3', '01:02:03,456 --> 01:02:04,000 X1:10 X2:20', '{\\an8}Trên cùng', '',
].join('\n');

test('SRT: numbering, HH:MM:SS,mmm timings, multi-line cues joined, style tags stripped', (t) => {
  const cues = parseSrt(SAMPLE);
  t.deepEqual(cues, [
    { index: 1, start: 1, end: 2.5, text: 'Xin chào các bạn' },
    { index: 2, start: 3, end: 5, text: 'Dòng thứ nhất dòng thứ hai' },
    { index: 3, start: 3723.456, end: 3724, text: 'Trên cùng' },
  ]);
});

test('SRT: UTF-8 with a BOM and CRLF line ends parse like LF', (t) => {
  const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(SAMPLE.replace(/\n/g, '\r\n'), 'utf8')]);
  t.deepEqual(parseSrt(decodeSrt(bytes)), parseSrt(SAMPLE));
});

test('SRT: extra blank lines and a missing blank line between cues are tolerated', (t) => {
  const cues = parseSrt('\n\n1\n00:00:01,000 --> 00:00:02,000\nMột\n2\n00:00:03,000 --> 00:00:04,000\nHai\n\n\n\n');
  t.deepEqual(cues.map((c) => [c.index, c.text]), [[1, 'Một'], [2, 'Hai']]);
});

const refusal = (source: string) => t_throws(source);
function t_throws(source: string): SrtError {
  try {
    parseSrt(source);
  } catch (err) {
    if (err instanceof SrtError) return err;
    throw err;
  }
  throw new Error('expected an SrtError');
}

test('SRT: a malformed cue is refused naming its number, its line and what is wrong', (t) => {
  const badTiming = refusal('1\n00:00:01,000 --> 00:00:02,000\nMột\n\n2\n00:00:03,000 -> 00:00:04,000\nHai\n');
  t.is(badTiming.cue, 2);
  t.is(badTiming.line, 6);
  t.regex(badTiming.message, /^Cue 2 \(line 6\): the timing "00:00:03,000 -> 00:00:04,000" is not HH:MM:SS,mmm --> HH:MM:SS,mmm/);

  const backwards = refusal('7\n00:00:05,000 --> 00:00:04,000\nMột\n');
  t.is(backwards.cue, 7);
  t.regex(backwards.message, /ends .* before it starts/);

  const noText = refusal('1\n00:00:01,000 --> 00:00:02,000\n\n2\n00:00:03,000 --> 00:00:04,000\nHai\n');
  t.is(noText.cue, 1);
  t.regex(noText.message, /has no text/);

  const noNumber = refusal('1\n00:00:01,000 --> 00:00:02,000\nMột\n\nhello\n00:00:03,000 --> 00:00:04,000\nHai\n');
  t.is(noNumber.cue, 2);
  t.regex(noNumber.message, /expected a cue number/);

  const unordered = refusal('1\n00:00:05,000 --> 00:00:06,000\nMột\n\n2\n00:00:01,000 --> 00:00:02,000\nHai\n');
  t.is(unordered.cue, 2);
  t.regex(unordered.message, /time order/);

  const badMinutes = refusal('1\n00:61:01,000 --> 00:62:02,000\nMột\n');
  t.regex(badMinutes.message, /^Cue 1 \(line 2\)/);
});

test('README /srt "A bad file is 400 SRT_INVALID naming the cue and what is wrong": a cue that ends when it starts has no duration, said as such (not "ends before it starts")', (t) => {
  const zero = refusal('1\n00:00:01,000 --> 00:00:02,000\nMột\n\n2\n00:00:03,000 --> 00:00:03,000\nHai\n');
  t.is(zero.cue, 2);
  t.is(zero.line, 6);
  t.is(zero.message, 'Cue 2 (line 6): it starts and ends at 00:00:03,000, so it has no duration.');
  t.notRegex(zero.message, /before it starts/);
});

test('SPEC Billing 3 (no paid gap) / README /srt: a cue starting at the same time as the cue before is refused naming both cues and their lines, since its speech would be cut to nothing yet billed', (t) => {
  const same = refusal('1\n00:00:00,000 --> 00:00:02,000\nAnh đi đâu đấy\n\n2\n00:00:00,000 --> 00:00:02,000\nEm đi chợ\n');
  t.is(same.cue, 2);
  t.is(same.line, 6);
  t.regex(same.message, /^Cue 2 \(line 6\): it starts at 00:00:00,000, as cue 1 \(line 2\) does; each cue must start after the one before/);
  // The refusal of a cue starting earlier names the earlier cue's line too.
  const earlier = refusal('4\n00:00:05,000 --> 00:00:06,000\nMột\n\n5\n00:00:01,000 --> 00:00:02,000\nHai\n');
  t.regex(earlier.message, /^Cue 5 \(line 6\): it starts before cue 4 \(line 2\); cues must be in time order/);
  // Overlapping cues that start one after the other stay accepted.
  t.is(parseSrt('1\n00:00:00,000 --> 00:00:02,000\nMột\n\n2\n00:00:00,001 --> 00:00:01,000\nHai\n').length, 2);
});

test('SRT: an empty file or one with only blank lines has no cues; bytes that are not UTF-8 are refused', (t) => {
  t.regex(refusal('').message, /no cues/);
  t.regex(refusal('\r\n\r\n  \n').message, /no cues/);
  t.throws(() => decodeSrt(Buffer.from([0x31, 0x0a, 0xff, 0xfe, 0x41])), { instanceOf: SrtError, message: /not valid UTF-8/ });
});

test('SRT: a file saved as UTF-16 (little or big endian, with its byte order mark) parses like UTF-8; a UTF-16 file cut mid-character is refused', (t) => {
  const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(SAMPLE, 'utf16le')]);
  t.deepEqual(parseSrt(decodeSrt(le)), parseSrt(SAMPLE));
  const be = Buffer.from(le);
  be.swap16();
  t.deepEqual(parseSrt(decodeSrt(be)), parseSrt(SAMPLE));
  t.throws(() => decodeSrt(le.subarray(0, le.length - 1)), { instanceOf: SrtError, message: /not valid UTF-16/ });
});

test('SRT: a cue number of more than nine digits is refused as not a cue number', (t) => {
  t.is(parseSrt('123456789\n00:00:01,000 --> 00:00:02,000\nMột\n')[0].index, 123456789);
  const refused = refusal(`${'9'.repeat(24)}\n00:00:01,000 --> 00:00:02,000\nMột\n`);
  t.regex(refused.message, /^Cue 1 \(line 1\): expected a cue number/);
});
