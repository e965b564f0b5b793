import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import './plot.css';

// The plots of the pages that plot (Pods, Usage): one uPlot chart with its
// text alternative, a summary of each series and a table of every point
// behind a toggle, so what the canvas draws can be read without it. Only
// those pages import this module, and with it uPlot and its stylesheet.

export interface PlotSeries {
  label: string;
  // One value per x; null where the series has no point there.
  values: (number | null)[];
}

export interface PlotProps {
  // The plot's title, also its figure's caption.
  title: string;
  // The x values: Unix seconds for a time axis, else indexes of xLabels.
  xs: number[];
  series: PlotSeries[];
  // How a value is written in the summary, the table and the axis.
  format: (v: number) => string;
  // The x axis is time (default), or categories named by xLabels.
  xLabels?: string[];
  // Bars instead of lines (a total per category).
  bars?: boolean;
  // How the summary, the table and the legend write an x of a time axis
  // (default: its UTC minute and second).
  xFormat?: (x: number) => string;
  // The x axis's extent (default: the data's; categories get half a step
  // either side so their bars show whole).
  xRange?: [number, number];
  // A data-plot attribute tests find the chart by.
  name: string;
}

const colors = ['#0b57d0', '#b3261e', '#146c2e', '#8e4ec6', '#b06000', '#00687a', '#5f6368', '#c2185b'];

// join aligns series sampled at their own times on one sorted x axis (the
// union of their times), null where a series has no point: uPlot's
// AlignedData.
export function join(points: { label: string; at: number[]; values: (number | null)[] }[]): { xs: number[]; series: PlotSeries[] } {
  const xs = [...new Set(points.flatMap((p) => p.at))].sort((a, b) => a - b);
  const index = new Map(xs.map((x, i) => [x, i]));
  const series = points.map((p) => {
    const values: (number | null)[] = xs.map(() => null);
    p.at.forEach((x, i) => (values[index.get(x)!] = p.values[i]));
    return { label: p.label, values };
  });
  return { xs, series };
}

// finite reads an API's decimal string (Prometheus style), null for NaN,
// ±Inf or no number: a gap in the plot, not a point.
export function finite(s: string | null | undefined): number | null {
  if (s == null) return null;
  const v = Number(s);
  return Number.isFinite(v) ? v : null;
}

function xText(p: PlotProps, x: number): string {
  if (p.xLabels) return p.xLabels[x] ?? String(x);
  if (p.xFormat) return p.xFormat(x);
  return new Date(x * 1000).toISOString().replace('T', ' ').slice(0, 19) + ' UTC';
}

export function Plot(p: PlotProps) {
  const box = useRef<HTMLDivElement>(null);
  const [table, setTable] = useState(false);
  const points = p.series.reduce((n, s) => n + s.values.filter((v) => v != null).length, 0);

  useEffect(() => {
    const el = box.current;
    if (!el || points === 0) return;
    const width = () => Math.max(280, el.clientWidth);
    const opts: uPlot.Options = {
      width: width(),
      height: 220,
      scales: {
        x: {
          time: !p.xLabels,
          range: p.xRange ?? (p.xLabels ? [-0.5, p.xLabels.length - 0.5] : undefined),
        },
      },
      axes: [
        p.xLabels
          ? { values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) ? (p.xLabels![t] ?? '') : '')) }
          : {},
        { values: (_u, ticks) => ticks.map((t) => p.format(t)), size: 84 },
      ],
      series: [
        { label: p.xLabels ? 'key' : 'time', value: (_u, v) => (v == null ? '–' : xText(p, v)) },
        ...p.series.map((s, i) => ({
          label: s.label,
          stroke: colors[i % colors.length],
          fill: p.bars ? colors[i % colors.length] + '55' : undefined,
          // A day's bar stays narrow even when it is the only one.
          paths: p.bars ? uPlot.paths.bars!({ size: [0.6, p.xLabels ? 60 : 16] }) : undefined,
          spanGaps: false,
          value: (_u: uPlot, v: number | null) => (v == null ? '–' : p.format(v)),
        })),
      ],
    };
    const u = new uPlot(opts, [p.xs, ...p.series.map((s) => s.values)] as uPlot.AlignedData, el);
    // Tests read what the chart holds (its data) through the element.
    (el as HTMLDivElement & { uplot?: uPlot }).uplot = u;
    const ro = new ResizeObserver(() => u.setSize({ width: width(), height: 220 }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
    };
  }, [p.xs, p.series, p.xRange, points]);

  const id = `plot-${p.name}`;
  return (
    <figure class="gg-plot" aria-labelledby={`${id}-title`}>
      <figcaption id={`${id}-title`}>{p.title}</figcaption>
      {points === 0 ? (
        <p>No samples in this window.</p>
      ) : (
        <>
          <div ref={box} class="gg-plot-canvas" data-plot={p.name} role="img" aria-label={`${p.title}: ${points} points; the summary and the table below say the same`} />
          <ul class="gg-plot-summary">
            {p.series.map((s) => (
              <li key={s.label}>{summary(p, s)}</li>
            ))}
          </ul>
          <button type="button" aria-expanded={table} aria-controls={`${id}-table`} onClick={() => setTable(!table)}>
            {table ? 'Hide the table' : 'Show as a table'}
          </button>
          {table && (
            <div class="gg-plot-table" id={`${id}-table`} tabIndex={0} role="region" aria-label={`${p.title} as a table`}>
              <table class="gg-table">
                <thead>
                  <tr>
                    <th scope="col">{p.xLabels ? 'Key' : 'Time'}</th>
                    {p.series.map((s) => (
                      <th scope="col" key={s.label}>{s.label}</th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {p.xs.map((x, i) => (
                    <tr key={x}>
                      <th scope="row">{xText(p, x)}</th>
                      {p.series.map((s) => (
                        <td key={s.label}>{s.values[i] == null ? '–' : p.format(s.values[i]!)}</td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </figure>
  );
}

// summary says a series in words: its points, lowest, highest and last.
function summary(p: PlotProps, s: PlotSeries): string {
  const vs = s.values.filter((v): v is number => v != null);
  if (vs.length === 0) return `${s.label}: no points`;
  return `${s.label}: ${vs.length} points, lowest ${p.format(Math.min(...vs))}, highest ${p.format(Math.max(...vs))}, last ${p.format(vs[vs.length - 1])}`;
}
