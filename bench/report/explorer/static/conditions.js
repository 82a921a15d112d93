/* "Your conditions": a database delay, a client count, a p99 objective and a
   connection budget, answered from the nearest measured cell of one run
   (source()): each option's req/s and cost there, whether it meets the
   objective within the budget, and plainly when the conditions lie outside
   what was measured, with the command that would measure them. */
"use strict";

const Conditions = {
  closed(run) {
    return run.cells.filter((cell) => cell.at.rate === null);
  },

  /** The run answers come from, and why: the newest not superseded that swept
      both the delay and the clients; else the newest not superseded with
      closed-loop cells; else the newest with any. runs: newest first. */
  source(runs) {
    const usable = runs.filter((run) => Conditions.closed(run).length);
    const current = usable.filter((run) => !run.superseded);
    const swept = current.filter((run) => ["delay", "clients"].every(
      (dim) => Data.values(Conditions.closed(run), dim).length > 1));
    if (swept.length) {
      return {run: swept[0], why: "the newest run, not superseded, that measured several database delays " +
        "and several client counts"};
    }
    if (current.length) return {run: current[0], why: "the newest run, not superseded (none swept both the delay and the clients)"};
    return usable.length ? {run: usable[0], why: "the newest run with closed-loop figures"} : null;
  },

  /** The measured value nearest wanted by distance (ties: the larger, the more cautious). */
  nearest(values, wanted, distance) {
    return values.reduce((best, value) => {
      const gap = distance(value, wanted) - distance(best, wanted);
      return gap < -1e-9 || (Math.abs(gap) <= 1e-9 && value > best) ? value : best;
    });
  },

  /** Where wanted stands among what was measured: a sentence, or null when measured exactly. */
  placed(name, wanted, found, values, unit) {
    const list = values.map((value) => Format.small(value)).join(", ");
    const low = values[0], high = values[values.length - 1];
    if (wanted < low || wanted > high) {
      return `Your ${name}, ${Format.small(wanted)}${unit}, lies outside what was measured ` +
        `(${Format.small(low)}–${Format.small(high)}${unit}): the figures below are at ` +
        `${Format.small(found)}${unit}, the nearest, and are not a prediction for yours.`;
    }
    if (wanted !== found) {
      return `Your ${name}, ${Format.small(wanted)}${unit}, was not measured (${list}${unit}): ` +
        `the figures below are at ${Format.small(found)}${unit}, the nearest.`;
    }
    return null;
  },

  budgetNote(budgets, budget) {
    if (!budgets.length) return "The run did not record the apps' connection budget.";
    if (budgets.includes(budget)) return null;
    const had = budgets.join(" or ");
    return budget < Math.min(...budgets)
      ? `Each app had ${had} database connections in this run; yours, ${budget}, is fewer: an option that ` +
        `held more is marked over budget, and what it would do within ${budget} was not measured.`
      : `Each app had ${had} database connections in this run; what the apps would do with ${budget} ` +
        "was not measured.";
  },

  /** The run's command with the conditions' delay, clients and budget instead of its own. */
  command(run, input) {
    const flags = [/\s(?:-c|--connections)(?:=|\s+)\S+/g, /\s--db-delay(?:=|\s+)\S+/g,
      /\s--db-connections(?:=|\s+)\S+/g];
    const base = flags.reduce((command, flag) => command.replace(flag, ""), run.facts.command);
    return `${base} --db-delay ${input.delay}ms -c ${input.clients} --db-connections ${input.budget}`;
  },

  /** One option at the cell: its figures and costs, and whether it fits the conditions. */
  option(cell, input) {
    const p99 = cell.latency.p99 ?? null;
    const used = cell.held ?? cell.budget;
    const meets = p99 !== null && p99 <= input.objective;
    const within = used === null || used === undefined || used <= input.budget;
    const ranked = cell.capacity ? Data.figure(cell, "capacity") : Data.figure(cell, "rps");
    return {name: Data.seriesName(cell), cell, p99, used, meets, within, fits: meets && within, ranked};
  },

  /** The answer to input ({route, delay, clients, objective, budget}) from run. */
  answer(run, input) {
    const cells = Conditions.closed(run).filter((cell) => cell.route === input.route);
    if (!cells.length) return {run, input, notes: [`This run measured no ${Data.routeLabel(input.route)}.`], options: []};
    const delays = Data.values(cells, "delay"), clientCounts = Data.values(cells, "clients");
    const delay = Conditions.nearest(delays, input.delay, (a, b) => Math.abs(a - b));
    const clients = Conditions.nearest(clientCounts, input.clients, (a, b) => Math.abs(Math.log(a / b)));
    const here = cells.filter((cell) => cell.at.delay === delay && cell.at.clients === clients);
    const budgets = [...new Set(here.map((cell) => cell.budget).filter((b) => b !== null))].sort((a, b) => a - b);
    const notes = [
      Conditions.placed("database delay", input.delay, delay, delays, " ms"),
      Conditions.placed("client count", input.clients, clients, clientCounts, ""),
      Conditions.budgetNote(budgets, input.budget),
    ].filter(Boolean);
    const options = here.sort(Data.compare).map((cell) => Conditions.option(cell, input))
      .sort((a, b) => (b.fits - a.fits) || ((b.ranked.value ?? -1) - (a.ranked.value ?? -1)));
    return {run, input, delay, clients, notes, options, exact: !notes.length, command: Conditions.command(run, input)};
  },

  verdict(answer) {
    const input = answer.input, fitting = answer.options.filter((option) => option.fits);
    const within = `a p99 within ${Format.small(input.objective)} ms and ${input.budget} connections`;
    if (!answer.options.length) return null;
    if (!fitting.length) return `No option measured here met ${within}.`;
    const [best, next] = fitting;
    const what = best.cell.capacity ? "capacity" : "req/s";
    let text = `Most ${what} with ${within}: ${best.name}, ${Format.count(best.ranked.value)} ${what === "req/s" ? "req/s" : "req/s capacity"}.`;
    if (next) {
      const difference = Data.difference(best.ranked, next.ranked);
      text += ` Next, ${next.name}, ${Format.count(next.ranked.value)}` + (difference ? `: ${difference}.` : ".");
    }
    return text;
  },

  rows(answer) {
    const capacity = answer.options.some((option) => option.cell.capacity);
    const cpu = answer.options.some((option) => option.cell.cpu_us);
    const header = ["option", "configuration", "req/s", ...(capacity ? ["capacity, req/s (objective)"] : []),
      "p99 ms", "connections held", "memory MiB", ...(cpu ? ["CPU µs/request"] : [])];
    const rows = answer.options.map((option) => {
      const cell = option.cell;
      const objective = cell.capacity && cell.capacity.objective;
      return [
        option.name, cell.configuration || Format.DASH,
        {text: Format.withInterval(cell.rps, cell.interval, Format.count), number: true},
        ...(capacity ? [{number: true, text: cell.capacity ? Format.withInterval(cell.capacity.value, cell.capacity.ci95, Format.count) +
          (objective ? ` (p${objective.percentile} ≤ ${objective.ms} ms)` : "") : Format.DASH}] : []),
        {number: true, class: option.meets ? "meets" : "misses",
          text: `${Format.small(option.p99)}: ${option.meets ? "meets" : "misses"}`},
        {number: true, class: option.within ? "" : "misses",
          text: option.used == null ? Format.DASH : `${option.used}${option.within ? "" : ": over budget"}`},
        {text: Format.small(cell.pss_mib), number: true},
        ...(cpu ? [{text: Format.small(cell.cpu_us && Data.cpuTotal(cell.cpu_us)), number: true}] : []),
      ];
    });
    return {header, rows};
  },

  render(container, answer) {
    const input = answer.input;
    const where = answer.delay === undefined ? "" : `${Data.routeLabel(input.route)} at ${Format.small(answer.delay)} ms ` +
      `and ${answer.clients} clients, from ${answer.run.title}`;
    const {header, rows} = Conditions.rows(answer);
    show(container,
      answer.notes.map((note) => el("p", {class: "note"}, note)),
      el("p", {}, Conditions.verdict(answer)),
      rows.length ? table(`Each option: ${where}`, header, rows) : null,
      answer.command ? el("p", {}, answer.exact ? "Measured at exactly these conditions; to measure them again:" :
        "To measure your conditions:") : null,
      answer.command ? el("code", {class: "command"}, answer.command) : null);
  },
};
