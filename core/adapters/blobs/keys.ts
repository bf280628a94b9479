/**
 * Blob keys are relative, `/`-separated paths chosen by the service
 * (`jobs/<id>.mp3`). Every adapter accepts the same keys, so one that is
 * refused by the directory adapter (where `..` would escape the root) is
 * refused by all of them.
 */
export function blobKeySegments(key: string): string[] {
  if (typeof key !== 'string' || key.length === 0 || key.length > 1024) {
    throw new RangeError('blob key must be a non-empty string of at most 1024 characters');
  }
  if (key.includes('\0') || key.includes('\\')) throw new RangeError(`invalid blob key: ${JSON.stringify(key)}`);
  const segments = key.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) {
    throw new RangeError(`invalid blob key: ${JSON.stringify(key)}`);
  }
  return segments;
}
