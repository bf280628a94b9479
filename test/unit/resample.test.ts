import test from 'ava';
import { Resampler, resamplePcm } from '../../core/speechkit/audio/resample.ts';
import { rmsLevel } from '../../core/speechkit/audio/pcm.ts';
import { energyAboveDb, sweep } from '../helpers/spectrum.ts';

/**
 * Issue 17: resampling is band-limited. Upsampling espeak-ng's 22,050 Hz to
 * 48,000 Hz must not mirror the speech band above the source's Nyquist
 * frequency (11,025 Hz), which linear interpolation did (about −15 dB on
 * this sweep).
 */
test('a 50 Hz–10 kHz sweep at 22,050 Hz resampled to 48 kHz keeps the energy above 11,025 Hz at least 60 dB below the signal', (t) => {
  const source = sweep(4, 22_050, 50, 10_000);
  t.true(energyAboveDb(source, 22_050, 10_500) < -60, 'the sweep itself stays below 10.5 kHz');
  const out = resamplePcm(source, 22_050, 48_000);
  const db = energyAboveDb(out, 48_000, 11_025);
  t.log(`energy above 11,025 Hz: ${db.toFixed(1)} dB`);
  t.true(db <= -60, `${db.toFixed(1)} dB`);
});

test('the same holds streamed in speech-sized pieces and at 44.1 kHz and 24 kHz', (t) => {
  const source = sweep(3, 22_050, 50, 10_000);
  for (const rate of [24_000, 44_100, 48_000]) {
    const r = new Resampler(22_050, rate);
    const parts: Buffer[] = [];
    for (let o = 0; o < source.length; o += 4096 + 2) parts.push(r.push(source.subarray(o, o + 4096 + 2)));
    parts.push(r.flush());
    const db = energyAboveDb(Buffer.concat(parts), rate, 11_025);
    t.true(db <= -60, `${rate} Hz: ${db.toFixed(1)} dB`);
  }
});

test('downsampling removes what the lower rate cannot carry instead of folding it back (no aliasing)', (t) => {
  // A 6 kHz tone does not exist at 8 kHz (Nyquist 4 kHz): it must vanish, not reappear at 2 kHz.
  const n = 22_050;
  const tone = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) tone.writeInt16LE(Math.round(16_000 * Math.sin((2 * Math.PI * 6000 * i) / 22_050)), i * 2);
  const out = resamplePcm(tone, 22_050, 8000);
  const ratioDb = 20 * Math.log10(rmsLevel(out.subarray(2000)) / rmsLevel(tone));
  t.true(ratioDb < -60, `${ratioDb.toFixed(1)} dB`);
});

test('flush returns the filter tail: the total length follows the rate ratio exactly', (t) => {
  const source = sweep(1, 22_050, 100, 1000);
  for (const rate of [8000, 16_000, 24_000, 44_100, 48_000]) {
    const out = resamplePcm(source, 22_050, rate);
    t.is(out.length / 2, Math.round((22_050 * rate) / 22_050), `${rate} Hz`);
  }
});

test('a closed resampler refuses more input; equal rates pass samples through untouched', (t) => {
  const r = new Resampler(22_050, 48_000);
  r.close();
  t.throws(() => r.push(Buffer.alloc(4)));
  const same = new Resampler(24_000, 24_000);
  const pcm = sweep(0.1, 24_000, 100, 200);
  t.deepEqual(same.push(pcm), pcm);
  t.is(same.flush().length, 0);
});
