"""What every chart shares, so that they read alike at the README's width
(about 900 px): one style (fonts that stay legible at that width), one colour
per app whatever the run, one legend outside the data, log axes labelled in
plain numbers, and the run's title."""

import functools
import zlib

import matplotlib
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

WIDTH = 10  # inches: at DPI, a little more than the README's column
DPI = 110
STYLE = {
    "font.size": 10,
    "axes.titlesize": 10,
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
# The same app in the same colour in every chart of every run (a run lists its
# apps in the order asked, which differs between runs).
APP_COLORS = {"flask": "C0", "quart": "C1", "sanic": "C2", "falcon": "C3"}
STYLES = ["-", "--", ":", "-."]
# (the data's span, max/min, above which: where each decade is labelled)
LOG_LABELS = [(100, (1, 2, 5)), (10, (1, 1.5, 2, 3, 5, 7)), (0, (1, 1.5, 2, 3, 4, 5, 6, 7, 8))]


def styled(draw):
    """draw(results, path) under STYLE: matplotlib resolves fonts when each
    text is made, so the style must hold while the figure is drawn."""

    @functools.wraps(draw)
    def wrapper(*args, **kwargs):
        with matplotlib.rc_context(STYLE):
            return draw(*args, **kwargs)

    return wrapper


def figure(height):
    """A figure of the common width, laid out by matplotlib's constrained
    layout, which makes room for a legend placed outside the axes."""
    return Figure(figsize=(WIDTH, height), layout="constrained")


def color(app):
    """The app's colour; an app this project does not know (a --target's, say)
    one of the others, picked from its name so that it too keeps it."""
    others = ["C4", "C5", "C6", "C8", "C9", "C7"]
    return APP_COLORS.get(app) or others[zlib.crc32(app.encode()) % len(others)]


def apps_of(results):
    """The apps of the run in the order of APP_COLORS (the legend's order)."""
    apps = dict.fromkeys(app.app for app in results.apps)
    return sorted(apps, key=lambda app: list(APP_COLORS).index(app) if app in APP_COLORS else 99)


def legend(figure, apps, styles=None, title=None, markers=None):
    """One legend for the whole figure, above the panels, out of the data:
    the apps' colours, then styles ({label: line style}) when lines differ
    by another value (connections, say); title, the figure's, above it (a
    suptitle would overlap it); markers ({app: marker}) for a plot of dots."""
    handles = [
        Line2D([], [], color=color(app), marker=(markers or {}).get(app, "o"), label=app)
        for app in apps
    ]
    if markers:
        for handle in handles:
            handle.set_linestyle("none")
    for label, linestyle in (styles or {}).items():
        handles.append(Line2D([], [], color="0.3", linestyle=linestyle, label=label))
    figure.legend(
        handles=handles,
        loc="outside upper center",
        ncols=min(len(handles), 6),
        title=title,
        title_fontproperties={"weight": "bold", "size": 11},
        frameon=False,
    )


def log_axis(axes, axis="y"):
    """A log axis labelled in plain numbers at 1, 2 and 5 of each decade (at
    more places when the data span less, LOG_LABELS), the other minor
    ticks unlabelled: the figures span orders of magnitude. Call it once the
    data are drawn: it reads their span."""
    scale = axes.set_yscale if axis == "y" else axes.set_xscale
    which = axes.yaxis if axis == "y" else axes.xaxis
    scale("log")
    low, high = axes.get_ylim() if axis == "y" else axes.get_xlim()
    span = high / low if low > 0 else 1000
    subs = next(subs for least, subs in LOG_LABELS if span > least)
    which.set_major_locator(LogLocator(subs=subs))
    which.set_major_formatter(FormatStrFormatter("%g"))
    which.set_minor_formatter(NullFormatter())


def saved(figure, results, path):
    """Caption the figure with the run (the command, then machine, date and
    commit), under the panels where it leaves the top to the legend, and
    write it as a PNG at path; returns path."""
    environment = results.environment
    figure.supxlabel(
        f"{results.command}\n{environment['cpu_count']} x {environment['cpu_model']}"
        f"  |  {environment['date'][:16]}  |  commit {(environment['git_commit'] or '?')[:10]}",
        fontsize=8,
        color="0.35",
    )
    figure.savefig(path, dpi=DPI)
    return path
