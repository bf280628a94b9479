/**
 * Reads a WAV the way a caption or lip-sync tool would and finds where the
 * speech is, independently of the service's own trimming code: 5 ms windows
 * whose peak is above 1% of full scale are speech; speech windows closer
 * than `bridgeMs` belong to one region.
 */
export interface DecodedWav {
  sampleRate: number;
  samples: Int16Array;
  seconds: number;
}

export function decodeWav(bytes: Buffer): DecodedWav {
  if (bytes.toString('ascii', 0, 4) !== 'RIFF' || bytes.toString('ascii', 8, 12) !== 'WAVE') throw new Error('not a WAV file');
  let offset = 12;
  let sampleRate = 0;
  let bits = 0;
  let channels = 0;
  while (offset + 8 <= bytes.length) {
    const id = bytes.toString('ascii', offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    if (id === 'fmt ') {
      channels = bytes.readUInt16LE(offset + 10);
      sampleRate = bytes.readUInt32LE(offset + 12);
      bits = bytes.readUInt16LE(offset + 22);
    }
    if (id === 'data') {
      if (bits !== 16 || channels !== 1) throw new Error(`expected 16-bit mono, got ${bits}-bit ${channels} channels`);
      const end = Math.min(bytes.length, offset + 8 + size);
      const data = bytes.subarray(offset + 8, end);
      const samples = new Int16Array(data.length >> 1);
      for (let i = 0; i < samples.length; i++) samples[i] = data.readInt16LE(i * 2);
      return { sampleRate, samples, seconds: samples.length / sampleRate };
    }
    offset += 8 + size + (size % 2);
  }
  throw new Error('WAV has no data chunk');
}

export interface Region {
  start: number;
  end: number;
}

export function speechWindows(wav: DecodedWav, windowMs = 5, threshold = 0.01): boolean[] {
  const size = Math.round((wav.sampleRate * windowMs) / 1000);
  const out: boolean[] = [];
  for (let from = 0; from < wav.samples.length; from += size) {
    let peak = 0;
    const to = Math.min(wav.samples.length, from + size);
    for (let i = from; i < to; i++) peak = Math.max(peak, Math.abs(wav.samples[i]));
    out.push(peak / 32768 >= threshold);
  }
  return out;
}

/** Speech regions in seconds; silences shorter than `bridgeMs` do not split a region. */
export function speechRegions(wav: DecodedWav, bridgeMs = 250, windowMs = 5): Region[] {
  const windows = speechWindows(wav, windowMs);
  const regions: Region[] = [];
  const bridge = Math.ceil(bridgeMs / windowMs);
  let start = -1;
  let lastSpeech = -1;
  windows.forEach((speech, i) => {
    if (!speech) return;
    if (start >= 0 && i - lastSpeech > bridge) {
      regions.push({ start: (start * windowMs) / 1000, end: ((lastSpeech + 1) * windowMs) / 1000 });
      start = -1;
    }
    if (start < 0) start = i;
    lastSpeech = i;
  });
  if (start >= 0) regions.push({ start: (start * windowMs) / 1000, end: Math.min(wav.seconds, ((lastSpeech + 1) * windowMs) / 1000) });
  return regions;
}

/** First speech at or after `from` seconds (null when there is none). */
export function firstSpeechAfter(wav: DecodedWav, from: number, windowMs = 5): number | null {
  const windows = speechWindows(wav, windowMs);
  for (let i = Math.floor((from * 1000) / windowMs); i < windows.length; i++) if (windows[i]) return (i * windowMs) / 1000;
  return null;
}

/** Seconds of speech inside [from, to). */
export function speechSecondsBetween(wav: DecodedWav, from: number, to: number, windowMs = 5): number {
  const windows = speechWindows(wav, windowMs);
  let n = 0;
  for (let i = Math.max(0, Math.floor((from * 1000) / windowMs)); i < Math.min(windows.length, Math.ceil((to * 1000) / windowMs)); i++) if (windows[i]) n++;
  return (n * windowMs) / 1000;
}
