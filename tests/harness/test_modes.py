"""The modes own their switches (bench/modes/mode.py): each mode's flags sit in
a group of its own in --help, written in its own module; its refusals are
asked with every run's; what it records once is a field of the results; and
the command line reaches Options whole: every destination a field, every
field a destination. Nothing is run."""

import ast
import dataclasses
import inspect
from pathlib import Path

import pytest

from bench import cli, modes, run
from bench.arguments import parser
from bench.modes import tune
from bench.modes.mode import Mode
from bench.options import flat_fields
from bench.records import Results
from bench.rotation import Sweeping

MODES = Path(modes.__file__).parent


def destinations():
    return {action.dest for action in parser()._actions if action.dest != "help"}


def groups_of_the_help():
    """{title: argument group} of ./benchmark.sh --help."""
    return {group.title: group for group in parser()._action_groups}


def test_every_destination_of_the_command_line_is_a_field_of_options_and_back():
    assert destinations() - set(flat_fields(modes.options_type())) == set(cli.CHOOSING)
    assert set(flat_fields(modes.options_type())) - destinations() == set(cli.MADE)


@pytest.mark.parametrize("mode", [m for m in modes.MODES if m.title], ids=lambda m: m.name)
def test_a_modes_flags_are_a_group_of_the_help_written_in_its_own_module(mode):
    flags = [action.option_strings for action in groups_of_the_help()[mode.title]._group_actions]
    assert flags, f"{mode.name}: a group without flags"
    assert Path(inspect.getsourcefile(mode.options)).is_relative_to(MODES)
    assert Path(inspect.getsourcefile(mode.options)).stem in (mode.name, "__init__")


@pytest.mark.parametrize("mode", modes.MODES, ids=lambda mode: mode.name)
def test_what_a_mode_records_once_is_a_field_of_the_results(mode):
    fields = {field.name for field in dataclasses.fields(Results)}
    asked = (["--slo", "100ms", "--db-delay", "5ms"], ["--rate", "9"], [])
    for argv in asked:
        options = cli.checked(["flask", *argv])[0]
        assert set(mode.recorded(options)) <= fields


def test_a_mode_added_to_the_registry_alone_has_its_option_typed_and_read(monkeypatch, capsys):
    """A toy mode with one option of its own, written in one place and added
    to the registry, nothing else: its flag is in --help, the run's Options
    has its field, typed, with its default when not given, and its refusal
    reads it."""

    def options(group):
        group.add_argument("--toy-level", type=int, default=0)

    def refused(options):
        return "--toy-level: at most 5" if options.toy_level > 5 else None

    toy = Mode(
        "toy",
        lambda results: [],
        title="a toy",
        options=options,
        fields=(("toy_level", int, 0),),
        refused=refused,
    )
    monkeypatch.setattr(modes, "MODES", [*modes.MODES, toy])
    assert "--toy-level" in parser().format_help()
    assert cli.checked(["flask", "--toy-level", "3"])[0].toy_level == 3
    assert cli.checked(["flask"])[0].toy_level == 0
    with pytest.raises(SystemExit) as exited:
        cli.checked(["flask", "--toy-level", "9"])
    assert exited.value.code == 2
    assert "--toy-level: at most 5" in capsys.readouterr().err


def test_each_modes_fields_are_what_its_flags_store():
    """A mode declares the fields its flags are stored under, and no other
    (tune's --tune, capacity's --slo and --slo-step, ...)."""
    groups = groups_of_the_help()
    for mode in modes.MODES:
        stored = (
            {action.dest for action in groups[mode.title]._group_actions} if mode.title else set()
        )
        assert {name for name, _, _ in mode.fields} == stored, mode.name


def test_the_objective_is_recorded_once_with_whether_slo_gave_it():
    def objective(*argv):
        return modes.recorded(cli.checked(["flask", *argv])[0]).get("objective")

    assert objective("--slo", "p95:50ms") == {"percentile": 95.0, "ms": 50.0, "given": True}
    assert objective("--tune") == {"percentile": 99.0, "ms": 100.0, "given": False}
    assert objective() is None


def test_the_measuring_modes_are_those_with_steps_and_each_is_in_the_report_once():
    assert {mode.name for mode in modes.MEASURING} == {m.name for m in modes.MODES if m.measures}
    names = [mode.name for mode in modes.MODES]
    assert len(names) == len(set(names))


# The modules that ask every mode alike: the command line, the run, its plan
# and its stages (bench/rotation.py).
ASKING = ("cli.py", "run.py", "plan.py", "rotation.py")


def test_the_run_and_its_command_line_name_no_mode():
    """The run, its plan and its command line ask every mode alike (bench/
    modes' MODES, MEASURING, SWEEPING): none imports one by name, so none
    branches on a mode's options."""
    submodules = {path.stem for path in MODES.iterdir() if path.stem != "__init__"}
    for module in ASKING:
        tree = ast.parse((MODES.parent / module).read_text())
        named = [
            (node.module, alias.name)
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom)
            for alias in node.names
            if (node.module or "").startswith("bench.modes.")
            or (node.module == "bench.modes" and alias.name in submodules)
        ]
        assert named == [], (module, named)


def owned_options():
    """The Options fields every mode's flags are stored under."""
    groups = groups_of_the_help()
    return {
        action.dest
        for mode in modes.MODES
        if mode.title
        for action in groups[mode.title]._group_actions
    }


@pytest.mark.parametrize("module", ASKING)
def test_the_run_and_its_command_line_read_no_option_of_a_mode(module):
    """bench/cli.py turns the command line into Options and asks every mode
    what it fills in; the run, its plan and its stages ask every mode what
    it measures, counts and sweeps: none reads a mode's option by name
    (--fan-out's route and sources are the fan-out mode's to fill in and to
    sweep, --db-delay's delays the delay mode's)."""
    owned = owned_options()
    assert {"fan_outs", "upstream_delays", "db_delays", "slo", "rates", "tune"} <= set(owned)
    tree = ast.parse((MODES.parent / module).read_text())
    read = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    read |= {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)}
    assert read & set(owned) == set()


def test_tune_chooses_the_deployments_it_starts():
    options = cli.checked(["flask", "--tune"])[0]
    assert options.sut.deployments == tune.candidates()
    assert cli.checked(["flask", "--tune", "--fan-out", "3"])[0].sut.deployments == (
        tune.candidates(fan_out=True)
    )
    assert cli.checked(["flask", "--deployment", "article"])[0].sut.deployments == ["article"]


def test_the_fan_out_mode_fills_in_the_sources_the_run_starts():
    """Three sources answering 50ms~10ms where the run starts the ratings
    route's sources, unless given; none for a --target's (its own) or a run
    without the route: the mode's defaults, not the command line's."""
    ratings = cli.checked(["quart", "--routes", "ratings"])[0]
    assert (ratings.fan_outs, [str(d) for d in ratings.upstream_delays]) == ((3,), ["50ms~10ms"])
    given = cli.checked(["quart", "--fan-out", "2", "--upstream-delay", "5ms"])[0]
    assert (given.routes, given.fan_outs, [str(d) for d in given.upstream_delays]) == (
        ["ratings"],
        (2,),
        ["5ms"],
    )
    target = cli.checked(["quart", "--target", "http://127.0.0.1:9", "--routes", "ratings"])[0]
    assert (target.fan_outs, target.upstream_delays) == ((), ())
    film = cli.checked(["quart", "--routes", "film"])[0]
    assert (film.fan_outs, film.upstream_delays) == ((), ())


def toy_sweep(name, values, events):
    """A sweeping Mode whose conditions are {name: value}, each one's start and
    stop written to events."""

    def sweep(_options, _sweeping):
        for value in values:
            events.append(f"start {name} {value}")
            try:
                yield {name: value}
            finally:
                events.append(f"stop {name} {value}")

    return Mode(name, lambda results: [], conditions=lambda _: (len(values), {}), sweep=sweep)


def test_the_stages_nest_every_sweep_and_stop_what_each_started(monkeypatch):
    """bench/run.py stages(): a stage per combination of the sweeps'
    conditions, the outermost first, first_of_outer on the first of each of
    its conditions; what a sweep started for a condition stops after the
    last stage in it, and at once when the run stops (closed)."""
    events = []
    delays, sources = toy_sweep("delay", [0.0, 0.005], events), toy_sweep("fan_out", "ab", events)
    monkeypatch.setattr(run, "SWEEPING", [delays, sources])
    sweeping = Sweeping(None, "", {})
    stages = [(s.delay, s.fan_out, s.first_of_outer) for s in run.stages(None, [], None, sweeping)]
    assert stages == [(0.0, "a", True), (0.0, "b", False), (0.005, "a", True), (0.005, "b", False)]
    assert events[:6] == [
        *("start delay 0.0", "start fan_out a", "stop fan_out a"),
        *("start fan_out b", "stop fan_out b", "stop delay 0.0"),
    ]
    events.clear()
    every = run.stages(None, [], None, sweeping)
    next(every).exits.callback(events.append, "stop the stage's apps")
    every.close()
    assert events == [
        *("start delay 0.0", "start fan_out a", "stop the stage's apps"),
        *("stop fan_out a", "stop delay 0.0"),
    ]
