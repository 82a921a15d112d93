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

  /** The run answers come from, and why: of the runs of the project's own
      apps not superseded, the newest that swept both the delay and the
      clients, else the newest that swept either, else the newest with
      closed-loop cells; else the newest with any. runs: newest first. */
  source(runs) {
    const usable = runs.filter((run) => run.project !== false && Conditions.closed(run).length);
    const current = usable.filter((run) => !run.superseded);
    const swept = (run) => ["delay", "clients"].filter(
      (dim) => Data.values(Conditions.closed(run), dim).length > 1);
    const both = current.filter((run) => swept(run).length === 2);
    if (both.length) {
      return {run: both[0], why: "the newest run, not superseded, that measured several database delays " +
        "and several client counts"};
    }
    const either = current.filter((run) => swept(run).length === 1);
    if (either.length) {
      const dim = swept(either[0])[0] === "delay" ? "database delays" : "client counts";
      return {run: either[0], why: `the newest run, not superseded, that measured several ${dim} ` +
        "(none swept both the delay and the clients)"};
    }
    if (current.length) return {run: current[0], why: "the newest run, not superseded (none swept the delay or the clients)"};
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
      const range = low === high ? Format.small(low) : `${Format.small(low)}–${Format.small(high)}`;
      return `Your ${name}, ${Format.small(wanted)}${unit}, lies outside what was measured ` +
        `(${range}${unit}): the figures below are at ` +
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

  /** Whether a cell's capacity was found at the conditions' objective (a p99 of as many ms). */
  atObjective(cell, input) {
    const objective = cell.capacity && cell.capacity.objective;
    return Boolean(objective) && objective.percentile === 99 && objective.ms === input.objective;
  },

  /** One option at the cell: its figures and costs, and whether it fits the
      conditions. Its capacity found at their objective: ranked by it, and it
      meets the objective at that rate if the rate is above zero (the closed
      loop's p99, at its peak, says nothing of it). Else by req/s, and it meets
      the objective if the closed loop's p99 did. */
  option(cell, input) {
    const p99 = cell.latency.p99 ?? null;
    const used = cell.held ?? cell.budget;
    const capacity = Conditions.atObjective(cell, input);
    const meets = capacity ? cell.capacity.value > 0 : p99 !== null && p99 <= input.objective;
    const within = used === null || used === undefined || used <= input.budget;
    const ranked = Data.figure(cell, capacity ? "capacity" : "rps");
    return {name: Data.seriesName(cell), cell, p99, used, meets, within, fits: meets && within, ranked, capacity};
  },

  /** A note when the run's capacities were found at another objective than the conditions'. */
  objectiveNote(cells, input) {
    const found = cells.filter((cell) => cell.capacity);
    if (!found.length || found.some((cell) => Conditions.atObjective(cell, input))) return null;
    const objective = found[0].capacity.objective;
    const at = objective ? `p${objective.percentile} ≤ ${objective.ms} ms` : "an objective it did not record";
    return `This run found each option's capacity at ${at}, not at your p99 of ${Format.small(input.objective)} ms: ` +
      "the options are ranked by req/s, and marked by whether their p99 meets yours.";
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
    const unmeasured = [  // what the command below would measure
      Conditions.placed("database delay", input.delay, delay, delays, " ms"),
      Conditions.placed("client count", input.clients, clients, clientCounts, ""),
      Conditions.budgetNote(budgets, input.budget),
    ].filter(Boolean);
    const notes = [...unmeasured, Conditions.objectiveNote(here, input)].filter(Boolean);
    const options = here.sort(Data.compare).map((cell) => Conditions.option(cell, input))
      .sort((a, b) => (b.fits - a.fits) || ((b.ranked.value ?? -1) - (a.ranked.value ?? -1)));
    const command = Conditions.command(run, input);
    return {run, input, delay, clients, notes, options, exact: !unmeasured.length, command};
  },

  verdict(answer) {
    const input = answer.input, fitting = answer.options.filter((option) => option.fits);
    const within = `a p99 within ${Format.small(input.objective)} ms and ${input.budget} connections`;
    if (!answer.options.length) return null;
    if (!fitting.length) return `No option measured here met ${within}.`;
    const [best, next] = fitting;
    const capacity = Conditions.atObjective(best.cell, input);
    let text = `Most ${capacity ? "capacity" : "req/s"} with ${within}: ${best.name}, ` +
      `${Format.count(best.ranked.value)} req/s${capacity ? " within the objective" : ""}.`;
    if (next) {
      const difference = Data.difference(best.ranked, next.ranked);
      text += ` Next, ${next.name}, ${Format.count(next.ranked.value)}` + (difference ? `: ${difference}.` : ".");
    }
    return text;
  },

  /** The answer's table: each option's figures and costs, the best first. */
  rows(answer) {
    const capacity = answer.options.some((option) => option.cell.capacity);
    const cpu = answer.options.some((option) => option.cell.cpu_us);
    const header = ["option", "configuration", "req/s", ...(capacity ? ["capacity, req/s (95% interval)"] : []),
      "p99 ms", "connections held", "memory MiB", ...(cpu ? ["CPU µs/request"] : [])];
    const rows = answer.options.map((option) => {
      const cell = option.cell;
      return [
        option.name, cell.configuration || Format.DASH,
        {text: Format.withInterval(cell.rps, cell.interval, Format.count), number: true},
        ...(capacity ? [{number: true, text: Tables.capacity(cell.capacity)}] : []),
        {number: true, class: option.meets ? "meets" : "misses",
          text: option.capacity ? `${Format.small(option.p99)} at its peak; ${option.meets ? "meets" : "misses"} at its capacity`
            : `${Format.small(option.p99)}: ${option.meets ? "meets" : "misses"}`},
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
