/**
 * The uploaded file of a multipart request, as core's multipart phase left
 * it (formidable: a temporary file on disk, never the whole upload in
 * memory), and the clean-up of every temporary file the request left.
 */
import { unlink } from 'node:fs/promises';
import { DomainError } from '../../core/errors.ts';
import type { RouteContext } from '../../core/plugin.ts';

export interface Upload {
  path: string;
  size: number;
  name: string | null;
}

interface FormidableFile {
  filepath: string;
  size: number;
  originalFilename?: string | null;
}

function filesOf(ctx: RouteContext): Record<string, FormidableFile | FormidableFile[]> {
  return ((ctx.request as unknown as { files?: Record<string, FormidableFile | FormidableFile[]> }).files) ?? {};
}

/** The one file sent as `field`; 400 when it is missing or sent twice. */
export function requireUpload(ctx: RouteContext, field: string, what: string): Upload {
  const value = filesOf(ctx)[field];
  if (Array.isArray(value)) throw new DomainError('invalid', `Send one ${what} as "${field}", not ${value.length}.`, { param: field });
  if (!value) throw new DomainError('invalid', `"${field}" is required: send the ${what} as a multipart file field named ${field}.`, { param: field, code: 'FILE_REQUIRED' });
  return { path: value.filepath, size: value.size, name: value.originalFilename ?? null };
}

/** Deletes the request's temporary upload files; never throws. */
export async function discardUploads(ctx: RouteContext): Promise<void> {
  const files = Object.values(filesOf(ctx)).flat();
  await Promise.all(files.map((f) => unlink(f.filepath).catch(() => undefined)));
}
