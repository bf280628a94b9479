import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { h } from './dom.ts';
import { fmtNumber } from './i18n.ts';

/**
 * Day charts of `GET /usage` with uPlot (about 50 KB, canvas). A canvas says
 * nothing to a screen reader, so every chart is a figure whose caption
 * names it and whose numbers are also in a table on the page.
 */

export interface Series {
  label: string;
  values: Array<number | null>;
  color: string;
  bars?: boolean;
}

const DAY_SECONDS = 86_400;
/** Tick steps of the value axis: whole numbers only (requests, tokens, milliseconds). */
const WHOLE_STEPS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1e3, 2e3, 2.5e3, 5e3, 1e4, 2e4, 2.5e4, 5e4, 1e5, 2e5, 2.5e5, 5e5, 1e6, 2e6, 2.5e6, 5e6, 1e7, 2e7, 5e7, 1e8];

/** A day on the time axis, in the page's language, as the UTC day it is. */
function dayLabel(ts: number): string {
  return new Intl.DateTimeFormat(document.documentElement.lang === 'vi' ? 'vi-VN' : 'en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' }).format(new Date(ts * 1000));
}

/** Every UTC day from `first` to `last` (YYYY-MM-DD), so days without traffic show as zero. */
export function daysBetween(first: string, last: string): string[] {
  const days: string[] = [];
  for (let t = Date.parse(`${first}T00:00:00Z`); t <= Date.parse(`${last}T00:00:00Z`); t += DAY_SECONDS * 1000) {
    days.push(new Date(t).toISOString().slice(0, 10));
  }
  return days;
}

export function dayChart(caption: string, summary: string, days: string[], series: Series[]): { figure: HTMLElement; destroy(): void } {
  const holder = h('div', { class: 'chart', role: 'img', 'aria-label': summary });
  const figure = h('figure', { class: 'chart-figure' }, h('figcaption', {}, caption), holder);
  const xs = days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
  const bars = uPlot.paths.bars?.({ size: [0.6, 40] });
  const options: uPlot.Options = {
    width: 600,
    height: 220,
    // Usage days are UTC days: label them as such, whatever the browser's zone.
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    scales: {
      // Half a day either side, so the first and last bars are whole.
      x: { time: true, range: (_u, min, max) => [min - DAY_SECONDS / 2, max + DAY_SECONDS / 2] },
      y: { range: (_u, _min, max) => [0, Math.max(1, Math.ceil((max ?? 0) * 1.1))] },
    },
    axes: [
      { stroke: '#3b4252', grid: { stroke: '#e5e9f0' }, incrs: [DAY_SECONDS, 2 * DAY_SECONDS, 7 * DAY_SECONDS, 14 * DAY_SECONDS, 28 * DAY_SECONDS], values: (_u, ticks) => ticks.map(dayLabel) },
      { stroke: '#3b4252', grid: { stroke: '#e5e9f0' }, incrs: WHOLE_STEPS, values: (_u, ticks) => ticks.map((v) => fmtNumber(v)), size: 60 },
    ],
    series: [
      { label: '' },
      ...series.map((s) => ({
        label: s.label,
        stroke: s.color,
        width: 2,
        fill: s.bars ? `${s.color}99` : undefined,
        paths: s.bars ? bars : undefined,
        points: { show: !s.bars, size: 5 },
        value: (_u: uPlot, v: number | null) => fmtNumber(v),
      })),
    ],
    legend: { live: false },
    cursor: { drag: { x: false, y: false } },
  };
  const plot = new uPlot(options, [xs, ...series.map((s) => s.values)], holder);
  const fit = () => plot.setSize({ width: Math.max(280, holder.clientWidth || 600), height: 220 });
  const observer = new ResizeObserver(fit);
  observer.observe(holder);
  requestAnimationFrame(fit);
  return {
    figure,
    destroy() {
      observer.disconnect();
      plot.destroy();
    },
  };
}
