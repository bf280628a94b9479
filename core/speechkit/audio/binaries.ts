/**
 * Finds system encoders on PATH (Debian's `lame` and `ffmpeg`), cached per
 * name: they are faster than the static ffmpeg @ffmpeg-installer bundles,
 * which stays the fallback.
 */
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

const found = new Map<string, string | null>();

/** Absolute path of an executable on PATH, or null. */
export function findExecutable(name: string, searchPath = process.env.PATH ?? ''): string | null {
  const key = `${name}\0${searchPath}`;
  if (found.has(key)) return found.get(key)!;
  let result: string | null = null;
  for (const dir of searchPath.split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      result = candidate;
      break;
    } catch {
      // not here
    }
  }
  found.set(key, result);
  return result;
}
