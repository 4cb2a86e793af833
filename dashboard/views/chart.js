/** A live uPlot time series: drawn once, then fed new data; it follows its box's width. */
import { html } from 'htm/preact';
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

/** A line; `right` puts it on a scale of its own, on the right, for a figure far smaller than the others; `dash` tells apart lines that often coincide. */
/** @typedef {{ label: string, stroke: string, right?: boolean, dash?: number[] }} ChartSeries */

const HEIGHT = 180;

/**
 * @param {{ id: string, title: string, unit: (value: number) => string, series: ChartSeries[], data: uPlot.AlignedData }} props
 */
export function Chart({ id, title, unit, series, data }) {
  const box = useRef(/** @type {HTMLDivElement | null} */ (null));
  const plot = useRef(/** @type {uPlot | null} */ (null));

  useEffect(() => {
    const el = box.current;
    if (el === null) return undefined;
    const values = (/** @type {uPlot} */ _u, /** @type {number[]} */ ticks) => ticks.map(unit);
    const fromZero = { range: (/** @type {uPlot} */ _u, /** @type {number} */ _min, /** @type {number} */ max) => /** @type {uPlot.Range.MinMax} */ ([0, max > 0 ? max * 1.1 : 1]) };
    const right = series.some((s) => s.right === true);
    const chart = new uPlot(
      {
        width: Math.max(200, el.clientWidth),
        height: HEIGHT,
        series: [
          {},
          ...series.map((s) => ({
            label: s.label,
            stroke: s.stroke,
            width: 1.5,
            ...(s.dash === undefined ? {} : { dash: s.dash }),
            scale: s.right === true ? 'right' : 'y',
            value: (/** @type {uPlot} */ _u, /** @type {number | null} */ v) => (v === null ? '–' : unit(v)),
          })),
        ],
        axes: [{}, { size: 70, values }, ...(right ? [{ scale: 'right', side: /** @type {const} */ (1), size: 70, values, grid: { show: false } }] : [])],
        scales: { y: fromZero, ...(right ? { right: fromZero } : {}) },
        legend: { live: true },
      },
      data,
      el,
    );
    plot.current = chart;
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(200, el.clientWidth), height: HEIGHT }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      chart.destroy();
      plot.current = null;
    };
  }, []);

  useEffect(() => {
    plot.current?.setData(data);
  }, [data]);

  return html`<figure class="card chart" id=${id} data-points=${data[0].length}>
    <figcaption>${title}</figcaption>
    <div ref=${box}></div>
  </figure>`;
}
