/**
 * The uploaded files of a multipart route (`body: 'multipart'`), as core's
 * multipart phase left them: temporary files on disk (formidable), never
 * an upload in memory. Core deletes them once the route's handler has
 * returned or thrown (route-pipeline.ts), so a handler only reads them.
 */
import { unlink } from 'node:fs/promises';
import { DomainError } from '../errors.ts';
import type { RouteContext } from '../plugin.ts';

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

/** Deletes the request's temporary upload files; never throws. Core's, after the handler. */
export async function discardUploads(ctx: RouteContext): Promise<void> {
  const files = Object.values(filesOf(ctx)).flat();
  await Promise.all(files.map((f) => unlink(f.filepath).catch(() => undefined)));
}
