"""One calibrated SimpleSSD timing swept over a grid, the others as its calibrated file
has them, and one figure's workload run at each point (tests/benchmarks/RESULTS.md,
"Calibrated on two figures, validated on four": how the 950 PRO's sequential write
moves with tPROG). Each line gives the figure, the simulated span, and the time the
flash's own programs of the run take at least (programs / dies x the mean program time;
SimpleSSD's pal.program.count counts a multi-plane program of a die's two planes once:
a 2 GiB sequential write is about 68,600 of them, 32 KiB each): a span shorter than that
is a run whose host outran the flash (its last completion came before the flash could
have programmed what it was given).

    SIMPLESSD=... RECLAIMSTUDY_CACHE=... PYTHONPATH=. .venv/bin/python \\
        tests/benchmarks/bench_simplessd_calibration_scan.py DRIVE PARAMETER LOW HIGH STEP \\
        [--figure NAME] [--work DIR]

DRIVE is a calibrated description (samsung-950-pro-256gb-calibrated), PARAMETER tR or
tPROG, LOW, HIGH and STEP its mean time in microseconds; the figure is the one the
parameter is fitted on unless --figure names another of the drive's.
"""

import argparse
import os
import re
import tempfile
from pathlib import Path

from reclaimstudy.artefacts.simplessd import build_simplessd
from reclaimstudy.artefacts.simplessd_calibration import (CALIBRATED, PARAMETERS, PLAN, US,
                                                          measurement, with_settings)
from reclaimstudy.artefacts.simplessd_validation import (DRIVE_INTERFACES, drive_config,
                                                         run_workload)
from reclaimstudy.config.systems import simplessd_sections


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("drive", choices=sorted(CALIBRATED))
    parser.add_argument("parameter", choices=[p.name for p in PARAMETERS])
    parser.add_argument("low", type=float)
    parser.add_argument("high", type=float)
    parser.add_argument("step", type=float)
    parser.add_argument("--figure")
    parser.add_argument("--work", type=Path)
    args = parser.parse_args()
    drive = CALIBRATED[args.drive]
    parameter = next(p for p in PARAMETERS if p.name == args.parameter)
    figure = measurement(drive, args.figure or next(
        s.figure for s in PLAN[drive] if s.parameter is parameter))
    path = drive_config(args.drive)
    text, pal = path.read_text(), simplessd_sections(path)["pal"]
    dies = int(pal["Channel"]) * int(pal["Package"]) * int(pal["Die"])
    binary = build_simplessd(Path(os.environ["SIMPLESSD"])).binary
    print(f"{args.drive}: {figure.name} against {parameter.name}, {dies} dies")
    with tempfile.TemporaryDirectory(prefix="simplessd-scan-") as scratch:
        work = (args.work or Path(scratch)).resolve()
        mean = round(args.low * US)
        while mean <= round(args.high * US):
            directory = work / f"{parameter.name}-{mean}"
            directory.mkdir(parents=True, exist_ok=True)
            config = directory / "drive.cfg"
            config.write_text(with_settings(text, parameter.settings(mean)))
            result = run_workload(binary, config, figure.workload, directory / "run",
                                  DRIVE_INTERFACES[drive])
            stdout = (directory / "run" / "stdout.txt").read_text()
            programs = float(re.search(r"^pal\.program\.count\s+(\S+)", stdout, re.M)[1])
            program_mean = (int(pal["LSBWrite"]) + int(pal["MSBWrite"])) / 2
            if parameter.name == "tPROG":
                program_mean = mean
            flash_s = programs / dies * program_mean / 1e12
            print(f"  {parameter.name} {mean / US:7.1f} us: {figure.name} "
                  f"{result.metric(figure.metric):10,.1f} {figure.metric} "
                  f"({result.metric(figure.metric) / figure.published - 1:+7.1%}); span "
                  f"{result.simulated_s:.3f} s, the flash's programs at least {flash_s:.3f} s"
                  f"{'  the host outran the flash' if result.simulated_s < flash_s else ''}",
                  flush=True)
            mean += round(args.step * US)


if __name__ == "__main__":
    main()
