"""A mode: one kind of measurement, or one section of the report that
presents what the measurements found, each a Mode in a module of its own
(bench/modes/). What a Mode holds, every part but its name and section
optional:

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
- steps(options, apps) -> {kind: (count, seconds each)}: its share of the
  run's plan at one database delay, which Progress counts down (bench/plan.py);
- before_start(stage) -> {Results field: [records]}: what it measures before
  the apps start (the ceiling);
- run(stage, found) -> {Results field: [records]}: what it measures of the
  apps started and verified (stage.measured), usually through the one
  rotation loop (bench/rotation.py); found holds the records of the modes
  before it at this database delay;
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
    steps: Callable = none_found
    before_start: Callable = none_found
    run: Callable = none_found

    @property
    def measures(self):
        """Whether it measures (else it only presents what the others found)."""
        return self.run is not none_found or self.before_start is not none_found
