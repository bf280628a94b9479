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

/**
 * The one file sent as `field`; 400 when it is missing or sent twice. Call it
 * before validating the text fields: a file sent as a text field (`curl -F
 * 'file=<x.srt'` instead of `-F file=@x.srt`) is then refused as the file
 * that did not come, saying how to send it, not as an unknown field.
 */
export function requireUpload(ctx: RouteContext, field: string, what: string): Upload {
  const value = filesOf(ctx)[field];
  if (Array.isArray(value)) throw new DomainError('invalid', `Send one ${what} as "${field}", not ${value.length}.`, { param: field });
  if (!value) {
    const asText = Object.hasOwn((ctx.request.body ?? {}) as object, field);
    const how = `send the ${what} as a multipart file field named ${field} (curl -F ${field}=@<path>)`;
    throw new DomainError('invalid', asText ? `"${field}" came as a text field: ${how}.` : `"${field}" is required: ${how}.`, { param: field, code: 'FILE_REQUIRED' });
  }
  return { path: value.filepath, size: value.size, name: value.originalFilename ?? null };
}

/** Deletes the request's temporary upload files; never throws. Core's, after the handler. */
export async function discardUploads(ctx: RouteContext): Promise<void> {
  const files = Object.values(filesOf(ctx)).flat();
  await Promise.all(files.map((f) => unlink(f.filepath).catch(() => undefined)));
}
