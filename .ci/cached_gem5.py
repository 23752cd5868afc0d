"""The cached gem5 build for CI's quick gem5 tests (marked quick: ci-tiny's).

    PYTHONPATH=. .venv/bin/python .ci/cached_gem5.py BUILDS_DIR

BUILDS_DIR is a build cache's gem5/ folder, where `./study gem5` keeps one KEY/ folder
per build (reclaimstudy/artefacts/gem5.py; its manifest.json written last, so a build
that died has none). Chosen: the newest finished build whose patches are this
checkout's series byte for byte (any gem5 v24.0.0.1 checkout, either variant; one with
DiskSim linked in first); else the one whose patches are the longest leading part of it
(an earlier commit's build: the series grows at its end, and ci-tiny needs 0001-0004
only), if the gem5 backend accepts it for ci-tiny. Prints its binary and exits 0 (a
note on stderr when it lacks patches); without one, says why on stderr and exits 1.
Nothing is built.
"""

import json
import os
import sys
from pathlib import Path

from reclaimstudy.artefacts.gem5 import Gem5Build, read_series
from reclaimstudy.errors import StudyError
from reclaimstudy.hashing import file_sha256

QUICK_SYSTEM = "ci-tiny"


def _names(patches) -> str:
    return " ".join(p["name"][:4] for p in patches) or "none"


def current_build(builds: Path) -> tuple[Gem5Build | None, str]:
    """The build, and what it lacks of the series (empty when it has all of it); or
    None, and why there is none."""
    series = read_series()
    wanted = [{"name": p.name, "sha256": file_sha256(p)} for p in series.patches]
    seen, found = [], []
    for manifest_path in sorted(builds.glob("*/manifest.json")):
        build = Gem5Build(manifest_path.parent)
        try:
            manifest = build.manifest
        except (OSError, json.JSONDecodeError):
            continue
        patches = manifest.get("patches", [])
        label = f"{build.directory.name} (patches {_names(patches)})"
        if not build.binary.is_file():
            seen.append(f"{label}: no binary")
        elif (manifest.get("gem5_version") != series.version or not patches
              or patches != wanted[:len(patches)]):
            seen.append(f"{label}: another series")
        else:
            found.append((len(patches), bool(manifest.get("disksim")),
                          manifest.get("built_at", ""), build))
    if found:
        count, _, _, build = max(found, key=lambda f: f[:3])
        lacks = "" if count == len(wanted) else (
            f"built with {_names(wanted[:count])} of this checkout's gem5-patches/, "
            f"without {_names(wanted[count:])}")
        return build, lacks
    why = (f"no finished build in {builds} has this checkout's gem5-patches/ "
           f"({_names(wanted)}, gem5 {series.version}) or a leading part of them")
    return None, why + (": " + "; ".join(seen) if seen else " (none there at all)")


def accepted(binary: Path) -> str:
    """Why the gem5 backend refuses `binary` for the quick tests' system ("" if it does
    not). Reads the binary's identity (the backend's own check; gem5 runs only our
    identify script, once per binary)."""
    from reclaimstudy.backends.gem5 import backend
    from reclaimstudy.config.systems import get_system
    os.environ["GEM5"] = str(binary)
    try:
        backend.require_patches(backend.find_gem5(), get_system(QUICK_SYSTEM))
    except StudyError as error:
        return str(error)
    return ""


if __name__ == "__main__":
    build, note = current_build(Path(sys.argv[1]))
    if build is None:
        print(note, file=sys.stderr)
        sys.exit(1)
    if note and (refused := accepted(build.binary)):
        print(f"{build.directory.name}, {note}, is refused for {QUICK_SYSTEM}: {refused}",
              file=sys.stderr)
        sys.exit(1)
    if note:
        print(f"{build.directory.name}: {note}", file=sys.stderr)
    print(build.binary)
