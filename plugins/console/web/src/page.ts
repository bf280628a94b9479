import type { Route } from './router.ts';

/** What a page module exports: it renders into the main element and may return how to stop (timers, requests). */
export type Cleanup = () => void;
export interface PageModule {
  render(root: HTMLElement, route: Route): Promise<Cleanup | void>;
}
