"""A flame graph of sampled stacks, as one self-contained SVG: no script,
no font or style from elsewhere; each frame's name, layer and share in its
<title> (a browser shows it on hover). Every process's stacks merged (the
"process PID" frames left out), the root at the bottom, each frame as wide
as its samples, coloured by its layer (bench/layers.py)."""

from html import escape

from bench import layers

WIDTH = 1200
ROW = 16
MIN_WIDTH = 0.5  # px: narrower frames (and what is above them) are left out
# One colour per layer, wherever layers are drawn: here, the layers' chart, the explorer.
COLOURS = {
    "server": "#e4572e",
    "framework": "#f3a712",
    "driver": "#7986cb",
    "event loop": "#669bbc",
    "JSON": "#a8c686",
    "HTTP client": "#c44e9a",
    "own code": "#2a9d8f",
    "other": "#bbbbbb",
    "kernel": "#555555",  # not sampled: no frame of a flame graph is the kernel's
    None: "#dddddd",  # a frame claimed by no rule: its caller's layer
}


def file_name(stem, profile):
    """The flame graph's file beside a run's JSON (stem: its name), for a
    profile (a Profile record's fields, as a dict): one per app, deployment,
    database delay, route, sources and rate."""
    delay = f"-{profile['db_delay_ms']:g}ms" if profile.get("db_delay_ms") else ""
    deployment = profile["deployment"].replace(" ", "").replace("+", "-")
    sources = f"-x{profile['fan_out']}" if profile.get("fan_out") else ""
    where = f"{profile['route']}{sources}-{profile['rate']:g}"
    return f"{stem}-flame-{profile['app']}-{deployment}{delay}-{where}.svg"


def tree(stacks):
    """{frame: [count, {children}]} of {stack: count}, process frames left out."""
    root = {}
    for stack, count in stacks.items():
        level = root
        for frame in stack.split(";"):
            if frame.startswith("process "):
                continue
            node = level.setdefault(frame, [0, {}])
            node[0] += count
            level = node[1]
    return root


def frames(level, total, x=0.0, depth=0):
    """(x px, depth, width px, frame) of every frame wide enough to draw."""
    for frame, (count, children) in sorted(level.items()):
        width = WIDTH * count / total
        if width >= MIN_WIDTH:
            yield x, depth, width, frame, count
            yield from frames(children, total, x, depth + 1)
        x += width


def svg(stacks, title):
    """The flame graph's SVG text (an empty graph for no samples)."""
    total = sum(stacks.values())
    drawn = list(frames(tree(stacks), total)) if total else []
    depth = max((each[1] for each in drawn), default=0) + 1
    height = (depth + 4) * ROW
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="monospace" font-size="11">',
        f'<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>',
        f'<text x="4" y="{ROW - 3}" font-size="13">{escape(title)} ({total:,} samples)</text>',
    ]
    x = 4
    for layer, colour in COLOURS.items():
        if layer in (None, layers.KERNEL):
            continue
        out.append(f'<rect x="{x}" y="{ROW + 2}" width="10" height="10" fill="{colour}"/>')
        out.append(f'<text x="{x + 13}" y="{ROW + 11}">{escape(layer)}</text>')
        x += 20 + 7 * len(layer)
    for left, level, width, frame, count in drawn:
        y = height - (level + 1) * ROW
        layer = layers.frame_layer(frame)
        label = frame.split(" (", 1)[0]
        tip = f"{frame}: {count:,} samples, {count / total:.1%} ({layer or 'its caller'})"
        out.append(
            f'<g><title>{escape(tip)}</title><rect x="{left:.1f}" y="{y}" width="{width:.1f}" '
            f'height="{ROW - 1}" fill="{COLOURS[layer]}"/>'
        )
        room = int(width / 7)  # characters that fit
        if room >= 3:
            text = label if len(label) <= room else label[: room - 2] + ".."
            out.append(f'<text x="{left + 2:.1f}" y="{y + ROW - 4}">{escape(text)}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"
