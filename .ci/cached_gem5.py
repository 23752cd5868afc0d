"""The cached gem5 build of this checkout's gem5-patches/, for CI's gem5 tests.

    PYTHONPATH=. .venv/bin/python .ci/cached_gem5.py BUILDS_DIR

BUILDS_DIR is a build cache's gem5/ folder, where `./study gem5` keeps one KEY/ folder
per build (reclaimstudy/artefacts/gem5.py; its manifest.json written last, so a build
that died has none). Prints the binary of the newest finished build whose patches are
this checkout's series byte for byte (any gem5 v24.0.0.1 checkout, either variant, with
or without DiskSim; one with DiskSim first, since it runs every profile), and exits 0;
without one, says why on stderr and exits 1. Nothing is built or written.
"""

import json
import sys
from pathlib import Path

from reclaimstudy.artefacts.gem5 import Gem5Build, read_series
from reclaimstudy.hashing import file_sha256


def current_build(builds: Path) -> tuple[Gem5Build | None, str]:
    series = read_series()
    wanted = [{"name": p.name, "sha256": file_sha256(p)} for p in series.patches]
    seen, found = [], []
    for manifest_path in sorted(builds.glob("*/manifest.json")):
        build = Gem5Build(manifest_path.parent)
        try:
            manifest = build.manifest
        except (OSError, json.JSONDecodeError):
            continue
        names = " ".join(p["name"][:4] for p in manifest.get("patches", []))
        if not build.binary.is_file():
            seen.append(f"{build.directory.name} (patches {names}): no binary")
        elif manifest.get("patches") != wanted or manifest.get("gem5_version") != series.version:
            seen.append(f"{build.directory.name} (patches {names}): another series")
        else:
            found.append((bool(manifest.get("disksim")), manifest.get("built_at", ""), build))
    if found:
        return max(found, key=lambda f: f[:2])[2], ""
    names = " ".join(p.name[:4] for p in series.patches)
    why = (f"no finished build in {builds} has this checkout's gem5-patches/ "
           f"({names}, gem5 {series.version})")
    return None, why + (": " + "; ".join(seen) if seen else " (none there at all)")


if __name__ == "__main__":
    build, why = current_build(Path(sys.argv[1]))
    if build is None:
        print(why, file=sys.stderr)
        sys.exit(1)
    print(build.binary)
