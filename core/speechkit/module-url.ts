/**
 * The URL of a module that runs on its own (a worker thread, a helper
 * process) next to the module asking for it. The extension follows the
 * caller's: `.ts` when the service runs from source through tsx, `.js` in
 * the compiled build under dist/, where no `.ts` file (and no tsx) exists.
 */
export function siblingModule(from: string, name: string): URL {
  const extension = new URL(from).pathname.endsWith('.ts') ? '.ts' : '.js';
  return new URL(`./${name}${extension}`, from);
}
