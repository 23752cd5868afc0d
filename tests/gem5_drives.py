"""What the tests of gem5's drives share (our analytic model, DiskSim's and SimpleSSD's
linked in): a system file around a [disk.timing] table, a gem5 binary that says what it
links, a file a gem5 patch creates (as created, or as the series leaves it), why this machine's gem5 cannot run a profile, a small
disk-calib job, and a drive's statistics summed over the job's phases."""

import json
import os
from pathlib import Path

import pytest

from reclaimstudy.artefacts import gem5 as gem5_build
from reclaimstudy.backends.gem5 import backend as gem5_backend
from reclaimstudy.campaigns import runs
from reclaimstudy.config.policies import get_policy
from reclaimstudy.config.systems import get_system
from reclaimstudy.config.workloads import get_workload
from reclaimstudy.errors import StudyError
from reclaimstudy.results.gem5_stats import select_values

# disk-calib at its smallest: random and sequential reads and writes, no swap.
SMALL = {"random_reads": 60, "seq_mib": 1, "random_writes": 20, "seq_write_mib": 1,
         "swap_out_mib": 0}


def system_toml(disk: dict, timing: dict) -> str:
    """A one-core 64 MiB system file whose [disk] and [disk.timing] are `disk` and `timing`."""
    def table(values: dict) -> str:
        return "\n".join(f"{k} = {json.dumps(v)}" for k, v in values.items())
    return ('description = "d"\n[cpu]\nmodel = "timing"\ncores = 1\nclock = "2GHz"\n'
            '[caches]\nhierarchy = "none"\n[memory]\ntype = "DDR3_1600"\nsize_mib = 64\n'
            f'[disk]\n{table(disk)}\n[disk.timing]\n{table(timing)}\n')


def gem5_binary(**linked: dict | None) -> gem5_backend.Gem5:
    """A gem5 of the current series that links the named drive simulators
    (disksim=..., simplessd=...: what identify.py reports of each)."""
    return gem5_backend.Gem5(Path("/opt/gem5.fast"), "24.0.0.1", "0" * 64, {},
                             gem5_backend.SERIES, **linked)


def patch_file(patch: str, path: str) -> str:
    """A file the gem5 patch `patch` creates, as it creates it."""
    text = (gem5_build.GEM5_PATCHES / patch).read_text()
    start = text.index(f"+++ b/{path}\n")
    hunk = text.index("\n@@", start) + 1
    body = []
    for line in text[text.index("\n", hunk) + 1:].splitlines():
        if not line.startswith("+"):
            break
        body.append(line[1:])
    return "\n".join(body) + "\n"


def series_file(path: str) -> str:
    """A file some gem5 patch creates, as the whole series leaves it: as created, then
    each later patch's changes to it applied in turn (`patch`)."""
    import subprocess
    import tempfile
    patches = [p.name for p in gem5_build.read_series().patches]
    made = next(i for i, name in enumerate(patches)
                if f"--- /dev/null\n+++ b/{path}\n" in (gem5_build.GEM5_PATCHES / name).read_text())
    with tempfile.TemporaryDirectory() as tree:
        target = Path(tree) / path
        target.parent.mkdir(parents=True)
        target.write_text(patch_file(patches[made], path))
        for name in patches[made + 1:]:
            text = (gem5_build.GEM5_PATCHES / name).read_text()
            header = f"diff --git a/{path} b/{path}\n"
            if header not in text:
                continue
            start = text.index(header)
            end = text.find("\ndiff --git ", start)
            section = text[start:] if end < 0 else text[start:end + 1]
            subprocess.run(["patch", "-s", "-p1", "-d", tree], input=section, text=True,
                           check=True)
        return target.read_text()


def reclaim_fs_functions(names: tuple[str, ...], namespace: dict) -> dict:
    """Functions and constants of configs/gem5/reclaim_fs.py (which runs inside gem5 and
    imports gem5's modules), defined in `namespace` beside what it provides in their
    stead (the gem5 classes they use)."""
    import ast
    tree = ast.parse(gem5_backend.CONFIG_SCRIPT.read_text())
    wanted = [node for node in tree.body
              if isinstance(node, ast.FunctionDef) and node.name in names
              or isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
              and node.targets[0].id in names]
    assert {getattr(n, "name", None) or n.targets[0].id for n in wanted} == set(names)
    exec(compile(ast.Module(wanted, []), str(gem5_backend.CONFIG_SCRIPT), "exec"), namespace)
    return namespace


def gem5_reason(profile: str, build: str = "./study gem5") -> str | None:
    """Why the gem5 named by GEM5 cannot run `profile` (None when it can); `build` is
    the command that makes one that can."""
    if not os.environ.get("GEM5"):
        return f"GEM5 is not set: these tests need a gem5 that runs {profile} ({build})"
    try:
        gem5_backend.require_patches(gem5_backend.find_gem5(), get_system(profile))
    except StudyError as error:
        return str(error)
    return None


def needs_gem5_for(profile: str, build: str = "./study gem5"):
    """Skip, saying why, unless GEM5 names a gem5 that runs `profile`."""
    reason = gem5_reason(profile, build)
    return pytest.mark.skipif(reason is not None, reason=reason or "")


def prepared_disk_calib(profile: str, name: str):
    """SMALL's disk-calib job on `profile`, prepared for gem5: (spec, prepared, params)."""
    workload = get_workload("disk-calib")
    spec = runs.RunSpec(f"gem5-{name}", get_system(profile), get_policy("baseline"),
                        workload, workload.arguments(SMALL), 0, "gem5")
    prepared = gem5_backend.Gem5Backend().prepare(spec)
    return spec, prepared, gem5_backend.run_params(spec, prepared, runs.job_text(spec, name),
                                                   3600)


def drive_stats(out: Path, pattern: str) -> dict[str, float]:
    """The drive's statistics matching `pattern`, by their last name, summed over the
    phases' blocks of out/stats.txt."""
    blocks = select_values(out / "stats.txt", [pattern])
    return {name.rsplit(".", 1)[1]: sum(block.get(name, 0) for block in blocks)
            for name in set().union(*blocks)}
