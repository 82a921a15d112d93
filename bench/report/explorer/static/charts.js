/* The two charts, drawn with uPlot (vendor/uplot/): each option's figure
   against the swept axis, with its interval as error bars; and the latency
   percentile spectrum in the HdrHistogram style (percentile on a log axis
   of 1 / (1 - p), so 90, 99, 99.9 % are evenly spaced). Colours are
   Okabe-Ito's colour-blind-safe set, one per app whatever the run; an app's
   deployments differ by their dash. */
"use strict";

const Charts = {
  APP_COLORS: {flask: "#0072B2", quart: "#E69F00", sanic: "#009E73", falcon: "#CC79A7"},
  OTHER_COLORS: ["#D55E00", "#56B4E9", "#000000", "#7f7f7f"],
  DASHES: [[], [8, 4], [2, 3], [10, 3, 2, 3], [4, 4]],
  HEIGHT: 340,

  color(app) {
    if (Charts.APP_COLORS[app]) return Charts.APP_COLORS[app];
    const hash = [...app].reduce((sum, char) => (sum * 31 + char.charCodeAt(0)) >>> 0, 7);
    return Charts.OTHER_COLORS[hash % Charts.OTHER_COLORS.length];
  },

  /** Each series' colour and dash: [[name, cells], ...] -> [{stroke, dash}, ...]. */
  styles(series) {
    const seen = {};
    return series.map(([, cells]) => {
      const app = cells[0].app;
      seen[app] = (seen[app] || 0) + 1;
      return {stroke: Charts.color(app), dash: Charts.DASHES[(seen[app] - 1) % Charts.DASHES.length]};
    });
  },

  width(container) {
    return Math.max(300, Math.min(container.clientWidth || 640, 900));
  },

  /** Error bars: intervals[s][i] = [low, high] of series s+1 at point i. */
  whiskers(intervals, colors) {
    return {hooks: {draw: [(u) => {
      const ctx = u.ctx, ratio = window.devicePixelRatio || 1, cap = 4 * ratio;
      ctx.save();
      ctx.lineWidth = 1.5 * ratio;
      intervals.forEach((points, index) => {
        if (!u.series[index + 1].show) return;
        const shift = (index - (intervals.length - 1) / 2) * 3 * ratio;  // side by side, not on top
        ctx.strokeStyle = colors[index];
        points.forEach((interval, i) => {
          if (!interval) return;
          const x = u.valToPos(u.data[0][i], "x", true) + shift;
          const [low, high] = interval.map((value) => u.valToPos(value, "y", true));
          ctx.beginPath();
          ctx.moveTo(x, low); ctx.lineTo(x, high);
          ctx.moveTo(x - cap, low); ctx.lineTo(x + cap, low);
          ctx.moveTo(x - cap, high); ctx.lineTo(x + cap, high);
          ctx.stroke();
        });
      });
      ctx.restore();
    }]}};
  },

  /** A log axis when every value is positive and they span more than 20x. */
  logScale(values) {
    const found = values.filter((value) => value !== null && value !== undefined);
    if (!found.length || found.some((value) => value <= 0)) return false;
    return Math.max(...found) / Math.min(...found) > 20;
  },

  series(series, styles) {
    return [{}, ...series.map(([name], index) => ({
      label: name, stroke: styles[index].stroke, dash: styles[index].dash,
      width: 2, spanGaps: true, points: {show: true, size: 7, fill: styles[index].stroke},
    }))];
  },

  empty(container, text) {
    show(container, el("p", {class: "empty"}, text));
    return null;
  },

  /** Each option's metric against the axis dimension; the uPlot, or null when nothing to plot. */
  sweep(container, series, axis, metric) {
    const xs = Data.values(series.flatMap(([, cells]) => cells), axis).filter((v) => v !== null);
    if (!series.length || !xs.length) return Charts.empty(container, "Nothing measured for these filters.");
    const figures = series.map(([, cells]) => xs.map((x) => {
      const cell = cells.find((one) => one.at[axis] === x);
      return cell ? Data.figure(cell, metric.key) : {value: null};
    }));
    const ys = figures.map((points) => points.map((point) => point.value ?? null));
    const styles = Charts.styles(series);
    const log = Charts.logScale(ys.flat());
    const dim = Data.page.dims[axis];
    show(container);
    return new uPlot({
      width: Charts.width(container), height: Charts.HEIGHT,
      scales: {x: {time: false, range: () => [-0.5, xs.length - 0.5]}, y: log ? {distr: 3} : {}},
      axes: [
        {label: dim.label + (dim.unit ? `, ${dim.unit}` : ""), splits: () => xs.map((_, i) => i),
          values: (u, splits) => splits.map((i) => Format.small(xs[i]))},
        {label: metric.label + (log ? " (log)" : ""), size: 70, values: (u, splits) => splits.map(metric.format)},
      ],
      series: Charts.series(series, styles),
      legend: {live: false},
      cursor: {drag: {x: false, y: false}},
      plugins: [Charts.whiskers(figures.map((points) => points.map((p) => p.interval || null)),
        styles.map((style) => style.stroke))],
    }, [xs.map((_, i) => i), ...ys], container);
  },

  /** Goodput (2xx within the objective, per second) against the multiple of
      its own capacity each option was offered: the line a service that
      refuses past capacity keeps flat, and one that lets every request wait
      drops. The capacity itself is the dotted line at 1x's goodput. */
  goodput(container, series) {
    if (!series.length) return Charts.empty(container, "No run past capacity for these filters.");
    const xs = [...new Set(series.flatMap(([, points]) => points.map((p) => p.multiple)))].sort((a, b) => a - b);
    const ys = series.map(([, points]) => xs.map((x) => points.find((p) => p.multiple === x)?.goodput?.value ?? null));
    const styles = Charts.styles(series);
    show(container);
    return new uPlot({
      width: Charts.width(container), height: Charts.HEIGHT,
      scales: {x: {time: false, range: () => [-0.5, xs.length - 0.5]}},
      axes: [
        {label: "offered, x its own capacity", splits: () => xs.map((_, i) => i),
          values: (u, splits) => splits.map((i) => `${xs[i]}x`)},
        {label: "goodput, req/s within the objective", size: 70, values: (u, splits) => splits.map(Format.count)},
      ],
      series: Charts.series(series, styles),
      legend: {live: false},
      cursor: {drag: {x: false, y: false}},
      plugins: [Charts.whiskers(series.map(([, points]) => xs.map((x) =>
        points.find((p) => p.multiple === x)?.goodput?.ci95 || null)), styles.map((style) => style.stroke))],
    }, [xs.map((_, i) => i), ...ys], container);
  },

  /** A spike and the recovery: each option's p99 against the second of its
      schedule (log when it spans far), the objective's seconds shaded where
      the spike was offered; the table beside it has the recovery. */
  spike(container, series) {
    if (!series.length) return Charts.empty(container, "No spike for these filters.");
    const xs = [...new Set(series.flatMap(([, [spike]]) => spike.seconds.map((row) => row.second)))]
      .sort((a, b) => a - b);
    const ys = series.map(([, [spike]]) => xs.map((x) => spike.seconds.find((row) => row.second === x)?.p99 ?? null));
    const styles = Charts.styles(series);
    const log = ys.flat().every((value) => value === null || value > 0);
    const [start, end] = [series[0][1][0].spike_start, series[0][1][0].spike_end];
    show(container);
    return new uPlot({
      width: Charts.width(container), height: Charts.HEIGHT,
      scales: {x: {time: false}, y: log ? {distr: 3} : {}},
      axes: [
        {label: "second of the schedule (the spike shaded)"},
        {label: "p99 of the answers, ms" + (log ? " (log)" : ""), size: 60},
      ],
      series: Charts.series(series, styles),
      legend: {live: false},
      cursor: {drag: {x: false, y: false}},
      plugins: [{hooks: {drawClear: [(u) => {
        const left = u.valToPos(start, "x", true), right = u.valToPos(end, "x", true);
        u.ctx.save();
        u.ctx.fillStyle = "rgba(0, 0, 0, 0.08)";
        u.ctx.fillRect(left, u.bbox.top, right - left, u.bbox.height);
        u.ctx.restore();
      }]}}],
    }, [xs, ...ys], container);
  },

  /** Latency by percentile of one cell per option, HdrHistogram's way. */
  spectrum(container, series) {
    if (!series.length) return Charts.empty(container, "Nothing measured for these filters.");
    // x = 1 / (1 - p): the model's nines (-log10(1 - p)) as a power of 10.
    const spectra = series.map(([, cells]) => new Map(cells[0].spectrum.map(([nines, ms]) => [10 ** nines, ms])));
    const xs = [...new Set(spectra.flatMap((spectrum) => [...spectrum.keys()]))].sort((a, b) => a - b);
    const ys = spectra.map((spectrum) => xs.map((x) => spectrum.get(x) ?? null));
    const styles = Charts.styles(series);
    const log = ys.flat().every((value) => value === null || value > 0);
    const ticks = [2, 10, 100, 1000, 10000, 100000];
    show(container);
    return new uPlot({
      width: Charts.width(container), height: Charts.HEIGHT,
      scales: {x: {time: false, distr: 3}, y: log ? {distr: 3} : {}},
      axes: [
        {label: "percentile (log of 1 / (1 - p))",
          splits: (u, axis, min, max) => ticks.filter((x) => x >= min && x <= max),
          filter: (u, splits) => splits,  // every tick labelled: uPlot's log filter keeps decades only
          values: (u, splits) => splits.map((x) => `${Number((100 - 100 / x).toPrecision(6))}%`)},
        {label: "latency, ms" + (log ? " (log)" : ""), size: 60},
      ],
      series: Charts.series(series, styles),
      legend: {live: false},
      cursor: {drag: {x: false, y: false}},
    }, [xs, ...ys], container);
  },
};
