"""The images' requirements with their hashes, for `pip install
--require-hashes` (the Dockerfile, through scripts/venv.sh's REQUIRE_HASHES):

    python -m tools.hashes [--check]

For each requirements file an image installs (IMAGE_FILES), writes
requirements-hashed/<the same name>: every pin of the file, in its order,
with the sha256 of the wheel pip installs on Linux for CPython 3.11 on
x86_64 (pip download, the project's own index settings; nothing is
installed). ARCHES may name aarch64 too, where every pin has a wheel for it
(hdrhistogram had none on the index used here). Run it after changing a
pin; tests/deploy/test_hashes.py checks that the hashed files hold exactly the
pins. --check: only say whether they do (exit 1 if not), without the network.
"""

import hashlib
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from tools import ROOT
from tools.command import Parser

IMAGE_FILES = ["requirements.txt", "requirements-charts.txt", "requirements-openloop.txt"]
FOLDER = ROOT / "requirements-hashed"
PYTHON = "3.11"
# pip takes each platform tag as given (no older manylinux implied): the
# tags a wheel of ours may carry, newest glibc first as pip prefers them.
GLIBC = ["2_36", "2_34", "2_31", "2_28", "2_27", "2_26", "2_24", "2_17", "2_12", "2_5"]
LEGACY = {"2_17": "manylinux2014", "2_12": "manylinux2010", "2_5": "manylinux1"}
ARCHES = ["x86_64"]
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)$")


def pins(path):
    """[(name, version)] of a requirements file, in its order."""
    found = []
    for line in Path(path).read_text().splitlines():
        line = line.split("#", 1)[0].strip().rstrip("\\").strip()
        if line and not line.startswith("--"):
            match = PIN.match(line)
            if not match:
                raise ValueError(f"{path}: not a pin: {line}")
            found.append((match[1], match[2]))
    return found


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def platforms(arch):
    tags = []
    for glibc in GLIBC:
        tags.append(f"manylinux_{glibc}_{arch}")
        if glibc in LEGACY:
            tags.append(f"{LEGACY[glibc]}_{arch}")
    return tags


def download(requirements, arch, folder):
    """The wheel files pip picks for arch, into folder."""
    options = [option for tag in platforms(arch) for option in ("--platform", tag)]
    files = [option for path in requirements for option in ("-r", str(path))]
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:"]
        + ["--python-version", PYTHON, "--implementation", "cp", *options, *files, "-d", folder],
        check=True,
    )


def wheel_hashes(folder):
    """{canonical name: [sha256, ...]} of the wheels in folder."""
    found = {}
    for wheel in sorted(Path(folder).glob("*.whl")):
        name = canonical(wheel.name.split("-", 1)[0])
        found.setdefault(name, []).append(hashlib.sha256(wheel.read_bytes()).hexdigest())
    return found


def hashed_text(path, hashes):
    lines = [
        f"# {path.name} with the sha256 of each wheel the images install",
        "# (python -m tools.hashes writes it; pip install --require-hashes).",
    ]
    for name, version in pins(path):
        digests = sorted(set(hashes[canonical(name)]))
        lines.append(f"{name}=={version} \\")
        lines += [f"    --hash=sha256:{digest} \\" for digest in digests[:-1]]
        lines.append(f"    --hash=sha256:{digests[-1]}")
    return "\n".join(lines) + "\n"


def write():
    sources = [ROOT / name for name in IMAGE_FILES]
    hashes = {}
    for arch in ARCHES:
        with tempfile.TemporaryDirectory() as folder:
            download(sources, arch, folder)
            for name, digests in wheel_hashes(folder).items():
                hashes.setdefault(name, []).extend(digests)
    FOLDER.mkdir(exist_ok=True)
    for path in sources:
        (FOLDER / path.name).write_text(hashed_text(path, hashes))


def stale():
    """The hashed files whose pins are not their source's."""
    return [
        name
        for name in IMAGE_FILES
        if not (FOLDER / name).exists() or pins(FOLDER / name) != pins(ROOT / name)
    ]


def main(argv=None):
    parser = Parser(prog="python -m tools.hashes", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check the pins (no network)")
    args = parser.parse_args(argv)
    if not args.check:
        write()
    behind = stale()
    if behind:
        sys.exit(f"requirements-hashed/ does not hold the pins of {', '.join(behind)}")
    print(f"requirements-hashed/: {len(IMAGE_FILES)} files, the pins of their sources")


if __name__ == "__main__":
    main()
