"""A calibrated SimpleSSD drive with one structural change, each figure's workload run on
it, and where each run's time went (tests/benchmarks/RESULTS.md, "Structural parameters
against the held-out misses"). Each line gives the figure against the published one and
the run's busy shares: the firmware cores (SimpleSSD's cpu.hil0/icl0/ftl0.busy over the
simulated span; a share near 100% is a core that limits the run) and the flash programs
the run issued (pal.program.count).

    SIMPLESSD=... RECLAIMSTUDY_CACHE=... PYTHONPATH=. .venv/bin/python \\
        tests/benchmarks/bench_simplessd_structural.py DRIVE VARIANT [--figure TEXT ...] \\
        [--work DIR]

DRIVE is a calibrated description (samsung-950-pro-256gb-calibrated), VARIANT one of
VARIANTS (`none`: the file as committed); --figure keeps the figures whose name holds
TEXT. The variants are what-ifs: none of them is a drive's description.
"""

import argparse
import os
import re
import tempfile
from pathlib import Path

from reclaimstudy.artefacts.simplessd import build_simplessd
from reclaimstudy.artefacts.simplessd_calibration import CALIBRATED, TPROG
from reclaimstudy.artefacts.simplessd_validation import (DRIVE_INTERFACES, DRIVE_MEASUREMENTS,
                                                         drive_config, run_workload)
from reclaimstudy.config.systems import simplessd_sections


def four_kib_units(pal: dict[str, str]) -> dict[tuple[str, str], str]:
    """The die described in 4 KiB units, so that SimpleSSD's logical page (its page times
    its planes) is 4 KiB, the real drives' mapping unit: one plane of 4 KiB pages, as many
    pages a block as the two-plane block of 16 KiB pages held (the block, the die and the
    drive keep their sizes), and a unit programmed in the time the die takes for 4 KiB of
    its 32 KiB two-plane program (tPROG x 4/32, so the die programs as many bytes a second
    as before). Read times stay: a die's page read takes tR whatever is moved out of it."""
    planes, page_size = int(pal["Plane"]), int(pal["PageSize"])
    share = 4096 / (planes * page_size)
    lsb, msb = (round(int(pal[key]) * share) for key in TPROG.keys)
    return {("pal", "Plane"): "1", ("pal", "PageSize"): "4096",
            ("pal", "Page"): str(int(pal["Page"]) * planes * page_size // 4096),
            ("pal", TPROG.keys[0]): str(lsb), ("pal", TPROG.keys[1]): str(msb)}


# Each variant: the keys it changes, given the description's [pal] section.
VARIANTS = {
    "none": lambda pal: {},
    "hil-cores-2": lambda pal: {("cpu", "HILCoreCount"): "2"},
    "hil-cores-3": lambda pal: {("cpu", "HILCoreCount"): "3"},
    "work-interval-10us": lambda pal: {("nvme", "WorkInterval"): "10000000"},
    "no-multi-plane": lambda pal: {("pal", "EnableMultiPlaneOperation"): "0"},
    "no-random-io-tweak": lambda pal: {("ftl", "EnableRandomIOTweak"): "0"},
    "superblock-cwd": lambda pal: {("pal", "SuperblockSize"): "CWD"},
    "4k-units": four_kib_units,
}


def with_keys(text: str, changes: dict[tuple[str, str], str]) -> str:
    """`text` with each (section, key) line given its value; each must be there once."""
    lines, section = text.splitlines(), ""
    found = dict.fromkeys(changes, 0)
    for number, line in enumerate(lines):
        heading = re.match(r"^\[(\w+)\]", line)
        if heading:
            section = str(heading[1])
            continue
        key = line.split(" = ", 1)[0]
        if (section, key) in changes:
            lines[number] = f"{key} = {changes[(section, key)]}"
            found[(section, key)] += 1
    missing = [f"[{s}] {k}" for (s, k), count in found.items() if count != 1]
    if missing:
        raise SystemExit(f"not once in the description: {', '.join(missing)}")
    return "\n".join(lines) + "\n"


def stat(stdout: str, name: str) -> float:
    found = re.search(rf"^{re.escape(name)}\s+(\S+)", stdout, re.M)
    return float(found[1]) if found else 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("drive", choices=sorted(CALIBRATED))
    parser.add_argument("variant", choices=sorted(VARIANTS))
    parser.add_argument("--figure", action="append")
    parser.add_argument("--work", type=Path)
    args = parser.parse_args()
    drive = CALIBRATED[args.drive]
    path = drive_config(args.drive)
    changes = VARIANTS[args.variant](simplessd_sections(path)["pal"])
    text = with_keys(path.read_text(), changes)
    binary = build_simplessd(Path(os.environ["SIMPLESSD"])).binary
    print(f"{args.drive}, {args.variant}: "
          + (", ".join(f"[{s}] {k} = {v}" for (s, k), v in changes.items()) or "as committed"))
    with tempfile.TemporaryDirectory(prefix="simplessd-structural-") as scratch:
        work = (args.work or Path(scratch)).resolve()
        work.mkdir(parents=True, exist_ok=True)
        config = work / "drive.cfg"
        config.write_text(text)
        for number, figure in enumerate(DRIVE_MEASUREMENTS[drive]):
            if args.figure and not any(part in figure.name for part in args.figure):
                continue
            run = work / f"{number}"
            result = run_workload(binary, config, figure.workload, run, DRIVE_INTERFACES[drive])
            stdout = (run / "stdout.txt").read_text()
            span = result.simulated_s * 1e12
            busy = " ".join(f"{core} {stat(stdout, f'cpu.{core}0.busy') / span:4.0%}"
                            for core in ("hil", "icl", "ftl"))
            value = result.metric(figure.metric)
            print(f"  {figure.name}: {value:,.1f} {figure.metric} "
                  f"({value / figure.published - 1:+.1%}); busy {busy}; "
                  f"{stat(stdout, 'pal.program.count'):,.0f} programs", flush=True)


if __name__ == "__main__":
    main()
