/* The page's data (inlined by bench/report/explorer/__init__.py, one
   model.view() per run) and what every view asks of it: the values of a
   dimension, the series of a set of cells, the figures a chart can plot. */
"use strict";

const Data = {
  page: JSON.parse(document.getElementById("explorer-data").textContent),
  APP_ORDER: ["flask", "quart", "sanic", "falcon"],

  /** A dimension's value as an option's key: "" for null (a closed-loop peak's rate). */
  key(value) {
    return value === null || value === undefined ? "" : String(value);
  },

  /** The runs, newest first. */
  runs() {
    return [...Data.page.runs].sort((a, b) => (b.facts.date || "").localeCompare(a.facts.date || ""));
  },

  routeLabel(route) {
    return Data.page.route_labels[route] || route;
  },

  /** An option's name, as legends and tables show it: "quart (tuned)". */
  seriesName(cell) {
    return `${cell.app} (${cell.deployment})`;
  },

  /** Apps in the charts' order (the reports' colours), then deployments by name. */
  compare(a, b) {
    const rank = (app) => (Data.APP_ORDER.includes(app) ? Data.APP_ORDER.indexOf(app) : 99);
    return rank(a.app) - rank(b.app) || a.app.localeCompare(b.app) || a.deployment.localeCompare(b.deployment);
  },

  /** The distinct values of a dimension among cells: null first, then ascending. */
  values(cells, dim) {
    const seen = [...new Set(cells.map((cell) => cell.at[dim]))];
    return seen.sort((a, b) => (a === null ? -1 : b === null ? 1 : a - b));
  },

  /** The dimensions that vary among cells (two numeric values or more): the axes a sweep can have. */
  axes(cells) {
    return Object.keys(Data.page.dims).filter(
      (dim) => Data.values(cells, dim).filter((value) => value !== null).length > 1,
    );
  },

  /** The cells grouped by option, in the charts' order: [[name, cells], ...]. */
  series(cells) {
    const groups = new Map();
    for (const cell of [...cells].sort(Data.compare)) {
      const name = Data.seriesName(cell);
      if (!groups.has(name)) groups.set(name, []);
      groups.get(name).push(cell);
    }
    return [...groups.entries()];
  },

  /** The points past capacity by option (app and deployment, with its
      capacity), each option's in multiple order: [[name, points], ...]. */
  overloadSeries(points) {
    const groups = new Map();
    for (const point of [...points].sort((a, b) => a.multiple - b.multiple)) {
      const name = `${point.app} (${point.deployment}), capacity ${Format.count(point.capacity)} req/s`;
      if (!groups.has(name)) groups.set(name, []);
      groups.get(name).push(point);
    }
    return [...groups.entries()].sort(([a], [b]) => a.localeCompare(b));
  },

  /** The profiles, one series per option: [[name, [profile]], ...] by name. */
  profileSeries(profiles) {
    return profiles.map((p) => [`${p.app} (${p.deployment})`, [p]])
      .sort(([a], [b]) => a.localeCompare(b));
  },

  /** The spikes, one series per option: [[name, [spike]], ...] by name. */
  spikeSeries(spikes) {
    return spikes.map((spike) => [`${spike.app} (${spike.deployment}), capacity ${Format.count(spike.capacity)} req/s`,
      [spike]]).sort(([a], [b]) => a.localeCompare(b));
  },

  /** Every figure a chart can plot: key, label, the cell's {value, interval, kind}, its format. */
  METRICS: [
    {key: "rps", label: "req/s", format: (v) => Format.count(v),
      get: (c) => ({value: c.rps, interval: c.interval, kind: c.interval_kind})},
    {key: "capacity", label: "capacity within the latency objective, req/s", format: (v) => Format.count(v),
      get: (c) => c.capacity && {value: c.capacity.value, interval: c.capacity.ci95, kind: "ci95"}},
    {key: "p99", label: "p99 latency, ms", format: (v) => Format.small(v),
      get: (c) => ({value: c.latency.p99 ?? null})},
    {key: "pss", label: "memory (PSS) at the end of its runs, MiB", format: (v) => Format.small(v),
      get: (c) => ({value: c.pss_mib})},
    {key: "cpu", label: "CPU per request, µs, the parts serving it", format: (v) => Format.small(v),
      get: (c) => c.cpu_us && {value: Data.cpuTotal(c.cpu_us)}},
  ],

  metric(key) {
    return Data.METRICS.find((metric) => metric.key === key);
  },

  /** A cell's figure for a metric: {value, interval, kind}, value null when not measured. */
  figure(cell, key) {
    return Data.metric(key).get(cell) || {value: null};
  },

  /** The metrics some cell carries: the charts offer no figure the run lacks. */
  available(cells) {
    return Data.METRICS.filter((metric) => cells.some((cell) => Data.figure(cell, metric.key).value != null));
  },

  /** The µs of the parts that serve a request: the load generator only asks (bench/sut/cost.py). */
  cpuTotal(parts) {
    return Object.entries(parts).filter(([name]) => name !== "generator")
      .reduce((total, [, part]) => total + (part ? part.value : 0), 0);
  },

  /** "app 812 · postgres 240": the CPU of each part of a request. */
  cpuParts(parts) {
    if (!parts) return Format.DASH;
    return Object.entries(parts).map(([part, found]) => `${part} ${Format.small(found && found.value)}`).join(" · ");
  },

  contains(interval, value) {
    return Boolean(interval) && value !== null && interval[0] <= value && value <= interval[1];
  },

  /** How two figures compare, honestly: with 95% intervals, "no measurable
      difference" when either interval holds the other's value; with min-max
      ranges, whether the ranges overlap; without intervals, nothing. */
  difference(first, second) {
    if (first.kind === "ci95" && second.kind === "ci95") {
      const same = Data.contains(first.interval, second.value) || Data.contains(second.interval, first.value);
      return same ? "no measurable difference" : "a measurable difference (95% intervals)";
    }
    if (first.interval && second.interval) {
      const overlap = first.interval[0] <= second.interval[1] && second.interval[0] <= first.interval[1];
      return overlap ? "their min–max ranges overlap: not a clear difference" : "their min–max ranges do not overlap";
    }
    return null;
  },

  /** A ratio's reading: "no measurable difference" when its 95% interval holds 1. */
  ratioWords(ratio) {
    if (ratio.value === null || ratio.value === undefined) return "no ratio: the baseline held no rate";
    if (!ratio.ci95) return "no interval";
    return Data.contains(ratio.ci95, 1) ? "no measurable difference" : "a measurable difference";
  },
};
