/**
 * What the process launcher (launcher.ts) and its helper process
 * (launcher-process.ts) say to each other. Its own module, free of side
 * effects: the helper's module sets up a process when it is loaded, so
 * the API process must never import it.
 */
/** Parent to helper. */
export type LauncherRequest = { op: 'start'; id: number; token: string; command: string; args: string[] } | { op: 'kill'; id: number };

/** Helper to parent. */
export type LauncherReply =
  | { op: 'ready' }
  | { op: 'started'; id: number; pid: number }
  | { op: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null; stderr: string }
  | { op: 'failed'; id: number; error: string };

/** Bytes of the token that opens each connection (hex of 16 random bytes). */
export const TOKEN_LENGTH = 32;

/** Characters of stderr kept per child. */
export const MAX_STDERR = 2000;
