"""A mode: one kind of measurement, a sweep of the conditions the
measurements run under (the database's distance, the ratings route's
sources), or one section of the report that presents what the measurements
found, each a Mode in a module of its own (bench/modes/). What a Mode
holds, every part but its name and section optional:

- options(group): adds its command-line flags to its own group of
  ./benchmark.sh --help (bench/arguments.py), each stored under one of its
  fields;
- fields: ((name, type, default), ...), what its flags store: fields of the
  run's Options (bench/options.py with_fields(), bench/modes options_type()),
  typed, with their value when a test builds Options without them;
- refused(options) -> a sentence or None: why its options cannot run with
  the others (bench/refusals.py asks every mode);
- extras(options) -> [package]: what it needs of the requirements-*.txt
  extras, installed before the run starts (bench/run.py);
- defaults(options) -> {Options field: value}: what it fills in where the
  command line left a value of its to it (the ratings route and its three
  sources; bench/cli.py asks every mode, before chooses);
- chooses(options) -> [deployment] or None: the deployments the run starts
  in place of --deployment's or --server's, where it chooses them (--tune
  its candidates; bench/cli.py asks every mode);
- tools(options) -> [tool]: the system tools it needs, by scripts/system.sh's
  names, checked before the run starts (bench/cli.py); bench/preflight.py,
  which runs before .venv exists, says the same from the command line alone
  (tests/harness/test_system.py holds the two equal);
- recorded(options) -> {Results field: value}: the facts it records once per
  run (the objective, say), which the report reads instead of rebuilding
  them from the command;
- conditions(options) -> (count, {kind: (count, seconds each)}): how many
  conditions its sweep yields (1: it sweeps none), and the steps it takes
  itself to set them up (the rating service's starts), once per condition
  of the sweeps outside it, for the run's plan (bench/plan.py);
- sweep(options, sweeping) -> {Stage field: value} per condition: its
  conditions, in order, each yielded inside what it started for it (the
  rating service, stopped after the last one that uses it);
  sweeping.add() takes what it records of them (bench/run.py nests every
  mode's sweep, outermost first: modes.SWEEPING);
- once_per_outer: its steps are taken once per condition of the outermost
  sweep, the database's distance (stage.first_of_outer), not per stage
  (the ceiling: the apps' conditions do not change the database's);
- steps(options, apps) -> {kind: (count, seconds each)}: its share of the
  run's plan at one stage, which Progress counts down (bench/plan.py);
- before_start(stage) -> {Results field: [records]}: what it measures before
  the apps start (the ceiling);
- measure_apps(stage, gathered) -> {Results field: [records]}: what it
  measures of the apps started and verified (stage.measured), usually
  through the one rotation loop (bench/rotation.py); gathered holds the
  records of the modes before it (and of the stages before);
- section(results) -> Markdown lines: its part of the report;
- charts: the chart functions of bench/report/charts/ it draws, with their
  file suffixes."""

from collections.abc import Callable
from dataclasses import dataclass


def no_options(group):
    """A mode without flags of its own."""


def refuses_nothing(_options):
    return None


def needs_nothing(_options):
    return []


def chooses_none(_options):
    return None


def none_found(*_):
    """No records, no recorded facts, no steps."""
    return {}


def one_condition(_options):
    """No sweep of its own: one condition, set up by nothing."""
    return 1, {}


def sweeps_nothing(_options, _sweeping):
    """No sweep of its own: the stage as the other sweeps set it."""
    yield {}


@dataclass(frozen=True)
class Mode:
    name: str
    section: Callable
    charts: tuple = ()
    title: str = ""  # its flags' group in --help
    options: Callable = no_options
    fields: tuple = ()
    refused: Callable = refuses_nothing
    extras: Callable = needs_nothing
    defaults: Callable = none_found
    chooses: Callable = chooses_none
    tools: Callable = needs_nothing
    recorded: Callable = none_found
    conditions: Callable = one_condition
    sweep: Callable = sweeps_nothing
    once_per_outer: bool = False
    steps: Callable = none_found
    before_start: Callable = none_found
    measure_apps: Callable = none_found

    @property
    def measures(self):
        """Whether it measures (else it only presents what the others measured)."""
        return self.measure_apps is not none_found or self.before_start is not none_found
