/* The page: the run chosen, its filters (route, app, server or deployment,
   one value of each dimension, the swept axis, the figure plotted), and what
   they select drawn in every section. Its state, charts and last answer are
   window.explorer's, for the browser tests to read. */
"use strict";

const Explorer = {
  runs: Data.runs(),
  run: null,
  state: null,
  charts: {sweep: null, spectrum: null, overload: null, spike: null},
  answer: null,

  routeCells() {
    return Explorer.run.cells.filter((cell) => cell.route === Explorer.state.route);
  },

  /** The dimensions the run's cells have a value in (the rate only where it ran open loop). */
  dims(cells) {
    return Object.keys(Data.page.dims).filter((dim) => cells.some((cell) => cell.at[dim] !== null));
  },

  /** The first state of a run's filters: everything shown, the first value of each dimension. */
  initial(run, route) {
    Explorer.run = run;
    const state = {route: run.routes.includes(route) ? route : run.routes[0]};
    Explorer.state = state;
    const cells = Explorer.routeCells();
    state.apps = new Set([...cells, ...run.apps].map((found) => found.app));  // one not measured too
    state.deployments = new Set(cells.map((cell) => cell.deployment));
    state.at = Object.fromEntries(Object.keys(Data.page.dims).map((dim) => [dim, Data.values(cells, dim)[0] ?? null]));
    Explorer.sweepAlong(Data.axes(cells)[0] || "clients");
  },

  /** The sweep's axis, and its first figure: p99 against an offered rate
      (what an open loop is for), req/s against the others. */
  sweepAlong(axis) {
    Explorer.state.axis = axis;
    Explorer.state.metric = axis === "rate" ? "p99" : "rps";
  },

  selected(cell, except) {
    const state = Explorer.state;
    return state.apps.has(cell.app) && state.deployments.has(cell.deployment) &&
      Object.keys(Data.page.dims).every((dim) => dim === except || cell.at[dim] === state.at[dim]);
  },

  select(label, name, value, options, change) {
    return el("label", {}, label, el("select", {name, onchange: (event) => change(event.target.value)},
      options.map(([key, text]) => el("option", {value: key, selected: key === value}, text))));
  },

  checkboxes(legend, name, values, chosen) {
    return el("fieldset", {}, el("legend", {}, legend), values.map((value) => el("label", {},
      el("input", {type: "checkbox", name, value, checked: chosen.has(value), onchange: (event) => {
        if (event.target.checked) chosen.add(value); else chosen.delete(value);
        Explorer.draw();
      }}), value)));
  },

  /** The filter controls for the run and route; focused: the name of the
      control to give the focus back to (the one that made them anew). */
  filters(focused) {
    const state = Explorer.state, cells = Explorer.routeCells(), dims = Data.page.dims;
    const values = (dim) => Data.values(cells, dim);
    const atControl = (dim) => Explorer.select(dims[dim].label, dim, Data.key(state.at[dim]),
      values(dim).map((value) => [Data.key(value), Format.dim(value, dims[dim])]),
      (key) => { state.at[dim] = values(dim).find((value) => Data.key(value) === key); Explorer.draw(); });
    const axes = Data.axes(cells);
    show(document.getElementById("filter-controls"),
      el("div", {class: "fields"},
        Explorer.select("Route", "route", state.route, Explorer.run.routes.map((r) => [r, Data.routeLabel(r)]),
          (route) => { Explorer.initial(Explorer.run, route); Explorer.filters("route"); Explorer.draw(); }),
        Explorer.dims(cells).map(atControl),
        axes.length ? Explorer.select("Swept axis (the chart's x)", "axis", state.axis,
          axes.map((dim) => [dim, dims[dim].label]), (dim) => {
            Explorer.sweepAlong(dim); Explorer.filters("axis"); Explorer.draw();
          }) : null,
        Explorer.select("Figure plotted", "metric", state.metric, Data.available(cells).map((m) => [m.key, m.label]),
          (key) => { state.metric = key; Explorer.draw(); })),
      Explorer.checkboxes("App", "app", [...new Set([...cells, ...Explorer.run.apps].map((c) => c.app))].sort(),
        state.apps),
      Explorer.checkboxes("Server or deployment", "deployment",
        [...new Set(cells.map((c) => c.deployment))].sort(), state.deployments));
    if (focused) document.querySelector(`#filter-controls [name="${focused}"]`).focus();
  },

  /** Every section of the run, as the filters select. */
  draw() {
    const state = Explorer.state, cells = Explorer.routeCells(), dims = Data.page.dims;
    for (const chart of Object.values(Explorer.charts)) if (chart) chart.destroy();
    const swept = cells.filter((cell) => Explorer.selected(cell, state.axis) && cell.at[state.axis] !== null);
    const metric = Data.metric(state.metric);
    const route = Data.routeLabel(state.route);
    const fixed = Object.keys(dims).filter((dim) => dim !== state.axis && Explorer.dims(cells).includes(dim))
      .map((dim) => Format.dim(state.at[dim], dims[dim])).join(", ");
    document.getElementById("sweep-title").textContent =
      `${metric.label} against ${dims[state.axis].label}: ${route}${fixed ? `, ${fixed}` : ""}`;
    const sweepChart = document.getElementById("sweep-chart");
    Explorer.charts.sweep = Charts.sweep(sweepChart, Data.series(swept), state.axis, metric);
    sweepChart.setAttribute("aria-label", `Chart: ${metric.label} of each option against ${dims[state.axis].label}; ` +
      "the table beside it has the same figures.");
    show(document.getElementById("sweep-table"), Tables.sweep(swept, state.axis));

    const point = Data.series(cells.filter((cell) => Explorer.selected(cell)));
    const where = Explorer.dims(cells).map((dim) => Format.dim(state.at[dim], dims[dim])).join(", ");
    document.getElementById("spectrum-title").textContent = `Latency by percentile: ${route}, ${where}` +
      (state.at.rate === null ? "" : " (open loop: latency from each request's due time)");
    const spectrumChart = document.getElementById("spectrum-chart");
    Explorer.charts.spectrum = Charts.spectrum(spectrumChart, point);
    spectrumChart.setAttribute("aria-label", "Chart: latency by percentile of each option; the table beside it has the figures.");
    show(document.getElementById("spectrum-table"), Tables.spectrum(point));

    const past = Explorer.run.overload.filter((p) => p.route === state.route && state.apps.has(p.app) &&
      state.deployments.has(p.deployment) && (state.at.delay === null || p.delay === state.at.delay));
    const goodput = Data.overloadSeries(past);
    document.getElementById("overload").hidden = !Explorer.run.overload.length;
    Explorer.charts.overload = Charts.goodput(document.getElementById("overload-chart"), goodput);
    document.getElementById("overload-chart").setAttribute("aria-label",
      "Chart: goodput of each option against the multiple of its capacity offered; the table beside it has the figures.");
    show(document.getElementById("overload-table"), Tables.overload(goodput));

    const spikes = Data.spikeSeries(Explorer.run.spikes.filter((s) => s.route === state.route &&
      state.apps.has(s.app) && state.deployments.has(s.deployment) &&
      (state.at.delay === null || s.delay === state.at.delay)));
    document.getElementById("spike").hidden = !Explorer.run.spikes.length;
    Explorer.charts.spike = Charts.spike(document.getElementById("spike-chart"), spikes);
    document.getElementById("spike-chart").setAttribute("aria-label",
      "Chart: the p99 of each option in each second of the step load; the table beside it has the recovery.");
    show(document.getElementById("spike-table"), Tables.spike(spikes));

    const profiles = Data.profileSeries(Explorer.run.profiles.filter((p) => p.route === state.route &&
      state.apps.has(p.app) && state.deployments.has(p.deployment) &&
      (state.at.delay === null || p.delay === state.at.delay)));
    document.getElementById("profile").hidden = !Explorer.run.profiles.length;
    show(document.getElementById("profile-table"), profiles.length ? Tables.profiles(profiles)
      : el("p", {class: "empty"}, "No profile for these filters."));
    show(document.getElementById("profile-flames"), Tables.flames(profiles));

    const apps = Explorer.run.apps.filter((app) => state.apps.has(app.app) &&
      (state.at.delay === null || (app.db_delay_ms ?? 0) === state.at.delay));
    show(document.getElementById("configuration-table"), Tables.configuration(apps));
  },

  /** A run chosen: its facts, its ratios, its filters, its sections. */
  choose(run) {
    Explorer.initial(run);
    show(document.getElementById("run-note"), run.superseded
      ? `Superseded: docs/results.md lists this run under “${run.superseded}”. Read it as history.` : null);
    show(document.getElementById("run-summary"), Tables.summary(run));
    show(document.getElementById("run-facts"), Tables.facts(run));
    const ratios = document.getElementById("ratios");
    ratios.hidden = !run.ratios.length && !run.noise_floor;
    const floor = run.noise_floor;
    show(document.getElementById("ratios-table"),
      floor ? el("p", {}, `A/A noise floor (the same app against itself): ${Format.withInterval(floor.value, floor.ci95,
        (v) => v.toFixed(3))}. A difference inside it is no measurable difference.`) : null,
      run.ratios.length ? Tables.ratios(run.ratios) : null);
    Explorer.filters();
    Explorer.draw();
  },

  /** "Your conditions": the form, answered from Conditions.source()'s run. */
  conditions(source) {
    const form = document.getElementById("conditions-form");
    if (!source) {
      form.hidden = true;
      show(document.getElementById("conditions-source"), "No run here measured a closed loop to answer from.");
      return;
    }
    const run = source.run;
    show(document.getElementById("conditions-source"), `Answered from the nearest measured cell of “${run.title}” ` +
      `(${(run.facts.date || "").slice(0, 10)}, commit ${(run.facts.commit || "?").slice(0, 7)}): ${source.why}.`);
    show(form.elements.route, run.routes.map((route) => el("option", {value: route}, Data.routeLabel(route))));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const input = {route: form.elements.route.value};
      for (const name of ["delay", "clients", "objective", "budget"]) input[name] = Number(form.elements[name].value);
      Explorer.answer = Conditions.answer(run, input);
      Conditions.render(document.getElementById("conditions-answer"), Explorer.answer);
    });
  },

  init() {
    const select = document.getElementById("run-select");
    const source = Conditions.source(Explorer.runs);
    const first = source ? source.run : Explorer.runs[0];
    show(select, Explorer.runs.map((run) => el("option", {value: run.id, selected: run === first},
      `${(run.facts.date || "").slice(0, 16).replace("T", " ")} · ${run.title}${run.superseded ? " [superseded]" : ""}`)));
    select.addEventListener("change", () => Explorer.choose(Explorer.runs.find((run) => run.id === select.value)));
    Explorer.conditions(source);
    if (first) Explorer.choose(first);
  },
};

window.explorer = Explorer;
Explorer.init();
