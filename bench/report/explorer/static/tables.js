/* The text beside every chart, and the run's other tables: the same figures
   as the charts, for reading, copying and screen readers. */
"use strict";

const Tables = {
  /** Every figure of the cells the sweep plots, memory and CPU beside req/s. */
  sweep(cells, axis) {
    const dim = Data.page.dims[axis];
    const capacity = cells.some((cell) => cell.capacity);
    const cpu = cells.some((cell) => cell.cpu_us);
    const kinds = [...new Set(cells.map((cell) => cell.interval_kind).filter(Boolean))];
    const header = ["option", dim.label + (dim.unit ? `, ${dim.unit}` : ""), "configuration",
      "req/s" + (kinds.length ? ` (${kinds.join("; ")})` : ""),
      ...(capacity ? ["capacity, req/s (95% interval)"] : []),
      "p99 ms", "errors", "memory MiB", "connections held", ...(cpu ? ["CPU µs/request, by part"] : [])];
    const rows = Data.series(cells).flatMap(([name, group]) => group
      .sort((a, b) => a.at[axis] - b.at[axis])
      .map((cell) => [
        name, {text: Format.small(cell.at[axis]), number: true}, cell.configuration || Format.DASH,
        {text: Format.withInterval(cell.rps, cell.interval, Format.count), number: true},
        ...(capacity ? [{text: Tables.capacity(cell.capacity), number: true}] : []),
        {text: Format.small(cell.latency.p99 ?? null), number: true},
        {text: Format.count(cell.errors), number: true},
        {text: Format.small(cell.pss_mib), number: true},
        {text: cell.held == null ? Format.DASH : `${cell.held}${cell.budget ? ` of ${cell.budget}` : ""}`, number: true},
        ...(cpu ? [Data.cpuParts(cell.cpu_us)] : []),
      ]));
    return table("The figures plotted, and what they cost", header, rows);
  },

  /** A capacity with its interval and the objective it was found at. */
  capacity(found) {
    if (!found) return Format.DASH;
    const objective = found.objective;
    return Format.withInterval(found.value, found.ci95, Format.count) +
      (objective ? ` at p${objective.percentile} ≤ ${objective.ms} ms` : "");
  },

  /** The named percentiles of each option's cell: one column per option. */
  spectrum(series) {
    const order = ["p50", "p75", "p90", "p95", "p99", "p99.9", "max"];
    const names = order.filter((name) => series.some(([, cells]) => cells[0].latency[name] != null));
    const rows = names.map((name) => [name, ...series.map(([, cells]) =>
      ({text: Format.small(cells[0].latency[name] ?? null), number: true}))]);
    return table("Latency, ms, by percentile", ["percentile", ...series.map(([name]) => name)], rows);
  },

  /** The AppRuns: what each server ran, as read back from it. */
  configuration(apps) {
    const fields = [
      ["app", "app"], ["deployment", "deployment"], ["db_delay_ms", "delay ms"], ["status", "status"],
      ["server", "server"], ["workers", "workers"], ["threads", "threads"], ["worker_class", "worker class"],
      ["in_flight", "in flight"], ["pool_size", "pool/process"], ["db_connections", "budget"],
      ["replicas", "copies"], ["pss_rest_mib", "MiB at rest"], ["differs", "differs from asked"],
      ["server_command", "server command"], ["settings", "settings"], ["versions", "versions"],
    ].filter(([key]) => apps.some((app) => app[key] !== null && app[key] !== undefined && app[key] !== ""));
    const text = (value) => {
      if (value === null || value === undefined) return Format.DASH;
      if (typeof value === "object") return Object.entries(value).map(([k, v]) => `${k}=${v}`).join(", ");
      return typeof value === "number" ? Format.small(value) : String(value);
    };
    const cell = (app, key) => {
      if (key === "server_command" && app[key]) return el("code", {}, app[key]);
      return key === "status" && app.reason ? `${app.status}: ${app.reason}` : text(app[key]);
    };
    const rows = apps.map((app) => fields.map(([key]) => cell(app, key)));
    return table("Each server as it ran", fields.map(([, label]) => label), rows);
  },

  /** Every multiple offered past capacity: what was answered in time, late,
      refused (503) or failed, per second, and how fast the refusals came. */
  overload(series) {
    const rows = series.flatMap(([name, points]) => points.map((p) => [
      name, {text: `${p.multiple}x`, number: true}, {text: Format.count(p.offered), number: true},
      {text: Format.withInterval(p.goodput?.value ?? null, p.goodput?.ci95, Format.count), number: true},
      {text: Format.count(p.late), number: true}, {text: Format.count(p.refused), number: true},
      {text: Format.count(p.errors), number: true},
      p.refusal_ms ? `${Format.small(p.refusal_ms.p50)} / ${Format.small(p.refusal_ms.p99)}` : Format.DASH,
      p.kept_schedule === false ? "late" : "kept",
    ]));
    return table("Past capacity, per second (95% intervals)", ["option", "offered", "req/s", "goodput",
      "late 2xx", "503", "other errors", "503 p50 / p99 ms", "generator"], rows);
  },

  /** Each spike: its phases, the goodput in each (95% intervals), and the
      seconds after the spike until every second kept the objective. */
  spike(series) {
    const rows = series.map(([name, [spike]]) => [
      name, spike.phases.join(", "),
      spike.goodput.map((g) => Format.withInterval(g?.value ?? null, g?.ci95, Format.count)).join(" / "),
      {text: spike.recovery?.value == null ? "not recovered"
        : Format.withInterval(spike.recovery.value, spike.recovery.ci95, Format.small) + " s", number: true},
    ]);
    return table("A spike and the recovery (medians of the runs; 95% intervals)",
      ["option", "phases", "goodput per phase, req/s", "recovery"], rows);
  },

  /** Where each option's CPU went: its µs per request by layer, as one bar
      (the widest the costliest option's; each layer its colour in the flame
      graphs) and as figures. */
  profiles(series) {
    const layers = Object.keys(Data.page.layers);
    const most = Math.max(...series.map(([, [p]]) => p.cpu_us || 0));
    const bar = (p) => el("div", {class: "layers", role: "img",
      "aria-label": layers.map((layer) => `${layer} ${Format.count(p.layers[layer] ?? 0)} µs`).join(", ")},
      layers.filter((layer) => p.layers[layer]).map((layer) => el("span", {class: "layer",
        title: `${layer}: ${Format.count(p.layers[layer])} µs`,
        style: `width: ${100 * p.layers[layer] / most}%; background: ${Data.page.layers[layer]}`})));
    const rows = series.map(([name, [p]]) => [name, {text: `${Format.count(p.rate)} req/s`, number: true},
      {text: Format.count(p.cpu_us), number: true}, bar(p),
      ...layers.map((layer) => ({text: Format.count(p.layers[layer] ?? null), number: true})),
      {text: Format.count(p.samples), number: true}]);
    return table("CPU µs per request, by layer (py-spy's samples share out the user time; the kernel is the system time)",
      ["option", "offered", "CPU µs", "by layer", ...layers.map((layer) => `${layer} µs`), "samples"], rows);
  },

  /** Each option's flame graph: its SVG file beside the run's JSON. */
  flames(series) {
    return series.map(([name, [p]]) => el("figure", {class: "flame"},
      el("img", {src: p.flame, alt: `Flame graph of ${name} at ${Format.count(p.rate)} req/s`, loading: "lazy"}),
      el("figcaption", {}, `${name} at ${Format.count(p.rate)} req/s: `, el("a", {href: p.flame}, p.flame))));
  },

  /** The run's ratios with their intervals, read as the interval says. */
  ratios(ratios) {
    const rows = ratios.map((ratio) => [
      `${ratio.app}${ratio.deployment ? ` (${ratio.deployment})` : ""} / ${ratio.baseline}`,
      Data.routeLabel(ratio.route), {text: Format.small(ratio.db_delay_ms ?? null), number: true},
      {text: Format.small(ratio.connections ?? null), number: true}, ratio.metric || "req/s",
      {text: Format.withInterval(ratio.value, ratio.ci95, (v) => v.toFixed(2)), number: true},
      Data.ratioWords(ratio),
    ]);
    return table("Ratios (95% intervals)", ["ratio", "route", "delay ms", "clients", "of", "value", "reading"], rows);
  },

  /** The run in a line: its command, commit, machine and date. */
  summary(run) {
    const facts = run.facts;
    return [el("code", {class: "command"}, facts.command),
      `at commit ${(facts.commit || "?").slice(0, 10)}${facts.dirty ? " (with uncommitted changes)" : ""} ` +
      `on ${facts.machine}, ${(facts.date || "").slice(0, 16).replace("T", " ")}.`];
  },

  /** The run's facts as a definition list's items. */
  facts(run) {
    const facts = run.facts, load = facts.load || {};
    const items = [
      ["Command", el("code", {}, facts.command)],
      ["Commit", (facts.commit || "?").slice(0, 10) + (facts.dirty ? " (with uncommitted changes)" : "")],
      ["Date", facts.date], ["Machine", facts.machine], ["OS", facts.os], ["Python", facts.python],
      ["Load generator", facts.wrk],
      ["Load", `${load.duration_s}s per run after a ${load.warmup_s}s warm-up, ${load.repeat} run(s) per figure, ` +
        `${load.threads} wrk threads, connections ${(load.connections || []).join(", ")}`],
      ["Open loop", facts.generator && `${facts.generator.version}, rates ${facts.generator.rates}`],
      ["Postgres", facts.database && Object.entries(facts.database).map(([k, v]) => `${k} = ${v}`).join(", ")],
      ["Delay proxy", facts.delay_proxy],
      ["CPU pinning", facts.pinning ? Object.entries(facts.pinning).map(([k, v]) => `${k} ${v}`).join(", ")
        : "none: the apps, Postgres and the load generator share every core"],
    ];
    return items.filter(([, value]) => value).flatMap(([name, value]) => [el("dt", {}, name), el("dd", {}, value)]);
  },
};
