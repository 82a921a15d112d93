"""bench/sut/cost.py, the CPU per request of each part: the window's
arithmetic on made-up snapshots of /proc (a process that lives through the
window, one born in it, one that exits in it, the generator in the harness's
reaped time), then on real processes against /proc/stat, and the report's
section (bench/modes/cpu.py). The whole run is tests/harness/test_benchmark_smoke.py's."""

import dataclasses
import subprocess
import sys
import time

import pytest

from bench.modes import cpu
from bench.records import Ceiling, Peak, Results, Summary
from bench.sut import cost, database
from infra import procfs

HARNESS_PID, APP, WORKER, DB, OTHER, CHILD = 10, 20, 21, 30, 40, 41


def snapshot(busy, *stats):
    return cost.Snapshot({each.pid: each for each in stats}, busy, at=busy)


def stat(pid, parent, cpu_seconds, reaped=0.0):
    return procfs.Stat(pid, parent, cpu_seconds, 0, reaped)


def test_each_part_is_what_its_trees_used_in_the_window():
    before = snapshot(
        100.0,
        stat(HARNESS_PID, 1, 5.0, reaped=2.0),  # reaped: the warm-up's generator
        stat(APP, HARNESS_PID, 1.0),
        stat(WORKER, APP, 10.0),
        stat(DB, 1, 3.0),
        stat(OTHER, 1, 50.0),
    )
    after = snapshot(
        110.0,
        stat(HARNESS_PID, 1, 5.1, reaped=3.0),  # the measured generator: 1 s
        stat(APP, HARNESS_PID, 1.5),
        stat(WORKER, APP, 14.0),
        stat(DB, 1, 4.0),
        stat(OTHER, 1, 52.0),
        stat(WORKER + 1, APP, 0.4),  # a worker born in the window: all of it
    )
    spent = cost.spent(before, after, {"app": [APP], "postgres": [DB]}, me=HARNESS_PID)
    assert spent == pytest.approx(
        {"app": 0.5 + 4.0 + 0.4, "postgres": 1.0, "generator": 1.0, "harness": 0.1, "others": 2.0}
    )
    used = cost.figures(10.0, 1000, spent, busy=10.0)
    assert used["share"] == pytest.approx(0.7) and not used["adds_up"]  # 7 of 10 s were ours
    assert cost.per_request(used) == pytest.approx(
        {"app": 4900.0, "postgres": 1000.0, "generator": 1000.0}
    )


def test_a_process_that_exits_in_the_window_counts_only_its_time_in_it():
    before = snapshot(0.0, stat(APP, 1, 1.0), stat(WORKER, APP, 7.0, reaped=1.0))
    # The worker used 0.5 s more, then exited: its parent reaped all 8.5 s.
    after = snapshot(1.0, stat(APP, 1, 1.2, reaped=8.5))
    assert cost.spent(before, after, {"app": [APP]}, me=HARNESS_PID)["app"] == pytest.approx(0.7)


def test_a_child_whose_parent_exited_too_lands_in_the_first_ancestor_left():
    before = snapshot(
        0.0, stat(OTHER, 1, 1.0), stat(CHILD, OTHER, 2.0), stat(CHILD + 1, CHILD, 3.0)
    )
    after = snapshot(1.0, stat(OTHER, 1, 1.0, reaped=2.5 + 3.5))
    assert cost.survivor(CHILD + 1, before.stats, after.stats) == OTHER
    assert cost.spent(before, after, {}, me=HARNESS_PID)["others"] == pytest.approx(1.0)


def test_a_reused_pid_reads_as_nothing_rather_than_less():
    before = snapshot(0.0, stat(APP, 1, 9.0))
    after = snapshot(1.0, stat(APP, 1, 0.1))
    assert cost.spent(before, after, {"app": [APP]}, me=HARNESS_PID)["app"] == 0.0


@pytest.mark.parametrize(
    ("share", "adds_up"), [(1.0, True), (0.91, True), (1.09, True), (0.89, False), (1.2, False)]
)
def test_the_parts_add_up_within_ten_percent_of_the_machine(share, adds_up):
    used = cost.figures(1.0, 10, {"app": share * 4, "others": 1.0}, busy=4.0)
    assert used["adds_up"] is adds_up


def test_repeats_are_added_up_before_dividing():
    first = cost.figures(2.0, 100, {"app": 0.1, "generator": 0.05, "others": 0.0}, busy=0.15)
    second = cost.figures(2.0, 300, {"app": 0.2, "generator": 0.05, "others": 0.1}, busy=0.35)
    both = cost.combined([first, None, second])
    assert both["requests"] == 400 and both["window_s"] == 4.0
    assert cost.per_request(both) == {"app": 750.0, "generator": 250.0}
    assert both["share"] == pytest.approx(0.4 / 0.5) and not both["adds_up"]
    assert cost.combined([None]) is None and cost.per_request(None) is None


def test_the_generator_serves_nothing():
    parts = {"app": 800.0, "postgres": 150.0, "nginx": 50.0, "generator": 300.0}
    assert cost.serving(parts) == 1000.0
    assert cost.per_core_second(parts) == 1000.0  # requests one core's second serves


def spin(seconds):
    """A process that burns `seconds` of CPU, then waits to be stopped."""
    code = f"import time\nend = time.process_time() + {seconds}\n"
    code += "while time.process_time() < end: pass\ntime.sleep(60)\n"
    return subprocess.Popen([sys.executable, "-c", code])


def test_every_part_present_has_a_figure_and_all_processes_add_up_to_the_machine():
    """Real processes: two parts and a generator, each burning CPU, in a window
    of the real /proc; every part given has its figure, the generator too,
    and every process of the machine together is /proc/stat's busy time."""
    app, proxy = spin(0.3), spin(0.2)
    try:
        with cost.Window({"app": [app.pid], "nginx": [proxy.pid], "upstream": [None]}) as window:
            subprocess.run([sys.executable, "-c", "sum(range(3_000_000))"], check=True)
            time.sleep(1.2)  # long enough that a busy machine's readings skew it little
        used = window.accounting(requests=1000)
    finally:
        for process in (app, proxy):
            process.kill()
            process.wait()
    per = cost.per_request(used)
    assert list(per) == ["app", "nginx", "generator"]  # no upstream was started
    assert all(value > 0 for value in per.values()), per
    everything = sum(used["cpu_s"].values())
    # Wide margin: clock ticks are 10 ms each, per process and for the machine,
    # and a child that exits while /proc is read may be missed (within 7 %
    # here while the fast tier ran beside, 2 % on a quiet machine).
    assert everything == pytest.approx(used["machine_busy_s"], rel=0.15, abs=0.1), used


def test_the_postmaster_is_the_parent_of_a_backend_on_this_machine(db):
    postmaster = database.postmaster(db)
    if db.info.host not in database.LOCAL and not db.info.host.startswith("/"):
        assert postmaster is None  # TEST_DATABASE_URL elsewhere: nothing to read here
        return
    words = procfs.cmdline(postmaster)
    assert words and "postgres" in words[0], words
    backend = database.scalar(db, "SELECT pg_backend_pid()")
    assert backend in procfs.tree(postmaster)


def accounted(share, others, requests=100):
    busy = 10.0
    return cost.figures(5.0, requests, {"postgres": share * busy, "others": others * busy}, busy)


def ceiling(used):
    per = cost.per_request(used)
    return Ceiling("film", 20, 1000.0, 1.0, 0, 20, "pgbench", cpu=used, cpu_us_per_transaction=per)


def results_with(*ceilings):
    return Results("", {"cpu_count": 2}, {"routes": ["film"]}, [], pgbench=list(ceilings))


def test_the_section_says_when_the_check_holds():
    text = "\n".join(cpu.section(results_with(ceiling(accounted(0.97, 0.02)))))
    assert "## CPU per request, by part" in text and "| 97% |" in text
    # postgres µs, serving µs, req per core-s, generator µs (none), generator share
    assert "| 97,000 | 97,000 | 10 | - | 0% |" in text
    assert "within 10% in 1 of 1 measurements" in text and "FAILS" not in text


def test_the_section_says_plainly_when_other_load_breaks_the_check():
    used = accounted(0.3, 0.69)
    used["others_busiest"] = {"cc1": 5.0, "python3": 1.9}
    text = "\n".join(cpu.section(results_with(ceiling(used))))
    assert "30%, NOT within 10% (other processes 69%)" in text
    assert "It FAILS for 1" in text and "Other load on the machine" in text
    assert "processes outside the run 69%-69%, the busiest cc1, python3" in text


def test_the_busiest_other_processes_are_named_when_they_break_the_check():
    before = snapshot(0.0, stat(APP, 1, 1.0), stat(OTHER, 1, 1.0), stat(CHILD, 1, 1.0))
    after = snapshot(4.0, stat(APP, 1, 2.0), stat(OTHER, 1, 3.0), stat(CHILD, 1, 1.5))
    named = {OTHER: "cc1", CHILD: "python3"}
    for snap in (before, after):
        for pid, each in snap.stats.items():
            snap.stats[pid] = dataclasses.replace(each, name=named.get(pid, "app"))
    used = cost.accounting(before, after, {"app": [APP]}, 100, me=HARNESS_PID)
    assert used["others_busiest"] == {"cc1": 2.0, "python3": 0.5}
    twice = cost.combined([used, used])
    assert twice["others_busiest"] == {"cc1": 4.0, "python3": 1.0}


def test_a_check_that_fails_with_nothing_else_running_is_not_blamed_on_others():
    text = "\n".join(cpu.section(results_with(ceiling(accounted(0.7, 0.01)))))
    assert "Nothing else explains it" in text


def test_a_target_the_run_did_not_start_is_not_blamed_on_other_load():
    """--target: the app's processes are not the run's, so they would read as
    "outside the run"; the check leaves that measurement out and says why."""
    used = accounted(0.2, 0.79)  # the target's own CPU, counted as others'
    used["others_busiest"] = {"gunicorn": 7.0}
    peak = Peak(
        "flask",
        "external",
        20,
        "film",
        Summary(1, 1000.0, 1000.0, 1000.0, {}, 5000, 0, 0),
        runs=[{"cpu": used}],
    )
    peak.cpu_us_per_request = cost.per_request(used)
    results = results_with()
    results.measurements.append(peak)
    text = "\n".join(cpu.section(results))
    assert "FAILS" not in text and "outside the run" not in text
    assert "does not apply to a server this run did not start (--target; 1 measurements)" in text
    assert "| - |" in text  # its check cell
    results.pgbench.append(ceiling(accounted(0.97, 0.02)))  # a window the run owns: checked
    text = "\n".join(cpu.section(results))
    assert "within 10% in 1 of 1 measurements" in text and "--target" in text


def test_a_run_without_accounting_has_no_section():
    assert cpu.section(results_with()) == []
