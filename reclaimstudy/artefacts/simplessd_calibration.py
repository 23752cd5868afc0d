"""SimpleSSD's two unpublished flash timings of a drive fitted to two of its maker's
figures, the other four held out (tests/benchmarks/RESULTS.md, "Calibrated on two figures,
validated on four"; the plan was committed before any run).

    python -m reclaimstudy.artefacts.simplessd_calibration --source DIR [--drive NAME]
                                                           [--write | --check]

A drive's description (configs/simplessd/NAME.cfg) takes its flash page read and program
times from SimpleSSD's sample: its maker publishes neither. Each is fitted as one number,
its mean over the LSB and MSB page, the sample's split between the two kept: first tR
(`LSBRead`, `MSBRead`) on the 4 KiB random read at queue depth 1, then tPROG
(`LSBWrite`, `MSBWrite`) on the 128 KiB sequential write at 32 with that tR. Nothing else
of the description changes. The search is a bisection on a grid over the parameter's
range (PARAMETERS: the bounds and where they come from), each trial one SimpleSSD-
Standalone run of the figure's workload through the drive's interface
(simplessd_validation.run_workload: the same runs the validation makes), so it is
deterministic; each trial is printed, and the trial closest to the published figure is
kept. When the range cannot reach the figure the nearer bound is kept and the result
says so.

`--write` writes configs/simplessd/NAME-calibrated.cfg (the uncalibrated file with the
four timings replaced, each tagged `[calibrated: on FIGURE, range]`, and the trials in
its header); `--check` repeats the search and compares it with the committed file.
"""

import argparse
import os
import re
import sys
import tempfile
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from reclaimstudy.artefacts.simplessd_validation import (DRIVE_INTERFACES,
                                                         DRIVE_MEASUREMENTS, Measurement,
                                                         drive_config, run_workload)
from reclaimstudy.errors import StudyError

# How close a calibrated drive must come back to a figure it was fitted on.
CALIBRATION_TOLERANCE = 0.02
SUFFIX = "-calibrated"
ANANDTECH = ("AnandTech's table of NAND latencies, Samsung SSD 840 review (2012), \"A TLC "
             "Refresher\"")
US = 1_000_000  # picoseconds
UNITS = {"latency_us": "us", "iops": "IOPS", "mb_s": "MB/s"}


@dataclass(frozen=True)
class Parameter:
    """One unpublished flash timing, fitted as its mean over the LSB and the MSB page (in
    picoseconds, SimpleSSD's unit), on a grid of `step` from `low` to `high`."""
    name: str
    what: str
    keys: tuple[str, str]        # the LSB page's key, the MSB page's
    split: tuple[int, int]       # [sample]'s LSB:MSB, kept
    low: int
    high: int
    step: int
    source: str                  # where the range comes from

    @property
    def points(self) -> int:
        """Grid points from `low` to `high`, both included."""
        return (self.high - self.low) // self.step + 1

    def mean(self, index: int) -> int:
        """The grid point `index`'s mean time (ps)."""
        return self.low + index * self.step

    def settings(self, mean: int) -> dict[str, int]:
        """The LSB and MSB keys' values (ps) for a mean time (ps), in [sample]'s split."""
        total = 2 * mean
        lsb = round(total * self.split[0] / sum(self.split))
        return {self.keys[0]: lsb, self.keys[1]: total - lsb}

    def range_text(self) -> str:
        return f"{self.low / US:g}-{self.high / US:,g} us"


TR = Parameter("tR", "mean page read time", ("LSBRead", "MSBRead"), (40, 65),
               25 * US, 75 * US, US // 10,
               ANANDTECH + ": SLC 25 us, MLC 50 us, TLC about 75 us; an MLC page reads no "
               "faster than an SLC page and no slower than a TLC one")
TPROG = Parameter("tPROG", "mean page program time", ("LSBWrite", "MSBWrite"), (500, 1300),
                  200 * US, 1350 * US, US,
                  ANANDTECH + ": SLC 200-300 us, MLC 600-900, TLC about 900-1,350; an MLC "
                  "page programs no faster than the fastest SLC and no slower than the "
                  "slowest TLC")
PARAMETERS = (TR, TPROG)
# The timing keys of a description's [pal], in the order its files give them: the four
# fitted, the CSB ones (0: MLC has none) and the erase time, which stays [sample]'s.
TIMING_KEYS = ("LSBRead", "MSBRead", "CSBRead", "LSBWrite", "MSBWrite", "CSBWrite", "Erase")


@dataclass(frozen=True)
class Step:
    """One parameter fitted on one published figure (a Measurement's name)."""
    parameter: Parameter
    figure: str


# The plan, in order: tR first (a full drive's QD1 random read programs nothing), then
# tPROG with it (a sequential write reads only garbage collection's valid pages).
PLAN: dict[str, tuple[Step, ...]] = {
    drive: (Step(TR, "4 KiB random read, QD1"), Step(TPROG, "128 KiB sequential write, QD32"))
    for drive in ("samsung-850-pro-256gb", "samsung-950-pro-256gb")}
# Each calibrated description, by name, and the drive it is fitted from.
CALIBRATED = {drive + SUFFIX: drive for drive in PLAN}
# What the search's trials and the sweeps after it (tests/benchmarks/
# bench_simplessd_calibration_scan.py) showed of each fit, written after the search and
# given in the calibrated file's header as such.
NOTES = {
    "samsung-850-pro-256gb": (
        "The sequential write is the SATA link's (594.7 MB/s) for every tPROG up to 850 us "
        "and falls smoothly from 900 us (578.6) to 1,250 (456.3): the fitted tPROG is the "
        "program time that brings the flash below the link to Samsung's 520 MB/s, 2.7 "
        "times the 950 PRO's fitted 390 us for the same V-NAND generation (RESULTS.md)."),
    "samsung-950-pro-256gb": (
        "The sequential write is not a smooth function of tPROG. In 15 of 41 runs from 340 "
        "to 420 us in 2 us steps (344-378 us every other step or more, 388, 412, 420; and "
        "343, 379, 391 among the trials) every write completes before the flash could have "
        "programmed it and the run gives the PCIe link's 3,390.3 MB/s; the others fall "
        "with tPROG, 1,009 MB/s at 340 us to 844 at 418, wobbling by a few percent from "
        "one step to the next. The kept 390 us (911.5) is on that second branch, 2-3.5% "
        "above its neighbours (891.3 at 386, 880.9 at 392), 1 us from a run of the first "
        "(391 us; RESULTS.md)."),
}


def measurement(drive: str, figure: str) -> Measurement:
    for m in DRIVE_MEASUREMENTS[drive]:
        if m.name == figure:
            return m
    raise StudyError(f"{drive} has no published figure '{figure}': it has "
                     f"{', '.join(m.name for m in DRIVE_MEASUREMENTS[drive])}")


def calibration_figures(drive: str) -> list[Measurement]:
    """The figures `drive`'s timings are fitted on, in the plan's order."""
    return [measurement(drive, step.figure) for step in PLAN[drive]]


def held_out(drive: str) -> list[Measurement]:
    """The figures the calibrated `drive` is validated on: all the others."""
    fitted = {step.figure for step in PLAN[drive]}
    return [m for m in DRIVE_MEASUREMENTS[drive] if m.name not in fitted]


@dataclass(frozen=True)
class Trial:
    mean: int            # the parameter's mean time (ps)
    simulated: float     # the figure's metric in SimpleSSD
    error: float         # (simulated - published) / published


@dataclass(frozen=True)
class Fit:
    """One step's search: its trials in order, the one kept, and whether the range
    reaches the published figure (False: the nearer bound was kept)."""
    step: Step
    published: float
    metric: str
    trials: tuple[Trial, ...]
    best: Trial
    reached: bool

    def line(self) -> str:
        """The result in one line, as the calibrated file and the command give it."""
        p = self.step.parameter
        reach = "" if self.reached else (f"; NOT REACHED within {p.range_text()}: the "
                                         f"nearer bound kept")
        return (f"{p.name} {self.best.mean / US:,g} us: {self.step.figure} "
                f"{self.best.simulated:,.1f} {UNITS[self.metric]} against "
                f"{self.published:,.1f} "
                f"published ({self.best.error:+.2%}), {len(self.trials)} trials{reach}")


def bisect(step: Step, published: float, metric: str, evaluate: Callable[[int], float],
           report: Callable[[Trial], None] = lambda trial: None) -> Fit:
    """Bisection of `step`'s parameter on its grid for the value whose figure
    (`evaluate(mean_ps)`) is the published one: both bounds first, then halving the
    bracket until its ends are neighbours; the trial closest to `published` is kept.
    The figure is taken to move one way with the parameter (a QD1 read's latency grows
    with tR, sequential writing slows with tPROG); where it does not, the bisection
    still ends, deterministically."""
    p = step.parameter
    trials: list[Trial] = []

    def trial(index: int) -> Trial:
        mean = p.mean(index)
        simulated = evaluate(mean)
        result = Trial(mean, simulated, simulated / published - 1)
        trials.append(result)
        report(result)
        return result

    lo, hi = 0, p.points - 1
    at_lo, at_hi = trial(lo), trial(hi)
    reached = min(at_lo.simulated, at_hi.simulated) <= published <= \
        max(at_lo.simulated, at_hi.simulated)
    if reached:
        while hi - lo > 1 and at_lo.error != 0 and at_hi.error != 0:
            mid = (lo + hi) // 2
            at_mid = trial(mid)
            if (at_mid.error > 0) == (at_lo.error > 0):
                lo, at_lo = mid, at_mid
            else:
                hi, at_hi = mid, at_mid
    best = min(trials, key=lambda t: (abs(t.error), t.mean))
    return Fit(step, published, metric, tuple(trials), best, reached)


def with_settings(text: str, settings: dict[str, int]) -> str:
    """A description's text with the [pal] keys of `settings` given those values (each
    key must be there once)."""
    for key, value in settings.items():
        text, count = re.subn(rf"^{key} = .*$", f"{key} = {value}", text, flags=re.M)
        if count != 1:
            raise StudyError(f"the description has {count} lines '{key} = ...': expected one")
    return text


def run_figure(binary: Path, drive: str, text: str, figure: Measurement,
               directory: Path) -> float:
    """`figure`'s metric for the description `text` of `drive` (run in `directory`)."""
    directory.mkdir(parents=True, exist_ok=True)
    config = directory / f"{drive}.cfg"
    config.write_text(text)
    result = run_workload(binary, config, figure.workload, directory / "run",
                          DRIVE_INTERFACES[drive])
    return result.metric(figure.metric)


def calibrate(binary: Path, drive: str, work: Path,
              report: Callable[[str], None] = print) -> list[Fit]:
    """The plan's steps for `drive`, in order, each with the ones before it applied."""
    if drive not in PLAN:
        raise StudyError(f"no calibration plan for '{drive}': the plan has "
                         f"{', '.join(PLAN)}")
    text = drive_config(drive).read_text()
    work = work.resolve()  # SimpleSSD runs in each trial's directory
    fits = []
    for number, step in enumerate(PLAN[drive]):
        figure = measurement(drive, step.figure)
        p = step.parameter
        count = [0]

        def evaluate(mean: int, p=p, figure=figure, number=number, count=count,
                     before=text) -> float:
            count[0] += 1
            return run_figure(binary, drive, with_settings(before, p.settings(mean)), figure,
                              work / drive / f"{number}-{p.name}" / f"{count[0]}")

        def shown(trial: Trial, p=p, figure=figure) -> None:
            settings = ", ".join(f"{k} {v / US:g} us" for k, v in p.settings(trial.mean).items())
            report(f"{drive}: {p.name} {trial.mean / US:,g} us ({settings}): {figure.name} "
                   f"{trial.simulated:,.1f} {UNITS[figure.metric]}, published "
                   f"{figure.published:,.1f} ({trial.error:+.2%})")

        fit = bisect(step, figure.published, figure.metric, evaluate, shown)
        report(f"{drive}: kept {fit.line()}")
        fits.append(fit)
        text = with_settings(text, p.settings(fit.best.mean))
    return fits


def calibrated_text(drive: str, fits: list[Fit]) -> str:
    """configs/simplessd/DRIVE-calibrated.cfg: DRIVE.cfg with its timings block replaced
    by the fitted numbers, each tagged `[calibrated: on FIGURE, range]`, and the search in
    a header. Every other line is DRIVE.cfg's."""
    base = drive_config(drive)
    lines = base.read_text().splitlines()
    given = {line.split(" = ", 1)[0]: (number, line.split(" = ", 1)[1])
             for number, line in enumerate(lines) if " = " in line and not line.startswith("#")}
    missing = [key for key in TIMING_KEYS if key not in given]
    order = [given[key][0] for key in TIMING_KEYS if key in given]
    if missing or order != list(range(order[0], order[0] + len(TIMING_KEYS))):
        raise StudyError(f"{base.name}: its [pal] timings must be the lines "
                         f"{', '.join(TIMING_KEYS)}, in that order, together (missing: "
                         f"{', '.join(missing) or 'none'})")
    first, last = order[0], order[-1]
    while first > 0 and lines[first - 1].startswith("#"):
        first -= 1
    fitted = {fit.step.parameter.name: fit for fit in fits}
    block = [
        "# Page read and program times (ps): not published for this die; their means fitted",
        "# to two of the maker's figures (reclaimstudy/artefacts/simplessd_calibration.py;",
        "# tests/benchmarks/RESULTS.md, \"Calibrated on two figures, validated on four\"),",
        "# [sample]'s split between the LSB and the MSB page kept (40:65 reading, 500:1,300",
        "# programming). The uncalibrated times, [sample]'s, are in " + base.name + ".",
    ]
    for parameter, keys in ((TR, ("LSBRead", "MSBRead", "CSBRead")),
                            (TPROG, ("LSBWrite", "MSBWrite", "CSBWrite"))):
        fit = fitted[parameter.name]
        block += wrapped(f"{parameter.name}, the {parameter.what}, {fit.best.mean / US:,g} us "
                         f"[calibrated: on {fit.step.figure} ({fit.published:,.1f} "
                         f"{UNITS[fit.metric]} published, {fit.best.simulated:,.1f} simulated, "
                         f"{fit.best.error:+.2%}), range {parameter.range_text()} "
                         f"({parameter.source})]"
                         + ("" if fit.reached else " NOT REACHED: the nearer bound") + ".")
        settings = parameter.settings(fit.best.mean)
        block += [f"{keys[0]} = {settings[keys[0]]}", f"{keys[1]} = {settings[keys[1]]}",
                  f"{keys[2]} = {given[keys[2]][1]}"]
    block += ["# Erase: not published for this die and not calibrated: [sample]'s.",
              f"Erase = {given['Erase'][1]}"]
    header = [f"# CALIBRATED: {base.name} with its two flash timings that SimpleSSD's "
              f"sample supplied",
              "# (the maker publishes neither) fitted to two of the maker's figures and "
              "nothing else",
              "# changed (tests/test_simplessd_validation.py holds every other key equal). "
              "Written by",
              "# `python -m reclaimstudy.artefacts.simplessd_calibration --source DIR "
              f"--drive {drive} --write`.",
              "# The search, each trial one SimpleSSD-Standalone run:"]
    for fit in fits:
        header += wrapped(f"  {fit.line()}: "
                          + ", ".join(f"{t.mean / US:,g} us {t.simulated:,.1f}"
                                      for t in fit.trials) + ".")
    if drive in NOTES:
        header += wrapped("After the search (not part of it): " + NOTES[drive])
    return "\n".join(header + [""] + lines[:first] + block + lines[last + 1:]) + "\n"


def wrapped(text: str, width: int = 90) -> list[str]:
    """`text` as comment lines of at most `width` characters."""
    return [("# " if number == 0 else "#   ") + line
            for number, line in enumerate(textwrap.wrap(text, width - 4, break_long_words=False,
                                                        break_on_hyphens=False))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m reclaimstudy.artefacts.simplessd_calibration",
        description="Fit a drive's unpublished flash timings to its calibration figures "
                    "(RESULTS.md, \"Calibrated on two figures, validated on four\").")
    parser.add_argument("--source", type=Path, default=os.environ.get("SIMPLESSD"),
                        help="the SimpleSSD-Standalone checkout (default: $SIMPLESSD)")
    parser.add_argument("--drive", action="append", choices=sorted(PLAN),
                        help="a drive to calibrate (default: every drive of the plan)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--write", action="store_true",
                      help="write configs/simplessd/DRIVE-calibrated.cfg")
    what.add_argument("--check", action="store_true",
                      help="compare the search with the committed DRIVE-calibrated.cfg")
    parser.add_argument("--work", type=Path,
                        help="keep each trial's run here (default: a temporary directory)")
    args = parser.parse_args(argv)
    if args.source is None:
        parser.error("--source DIR or SIMPLESSD: the SimpleSSD-Standalone checkout")
    from reclaimstudy.artefacts.simplessd import build_simplessd
    try:
        build = build_simplessd(args.source)
        differ = []
        with tempfile.TemporaryDirectory(prefix="simplessd-calibration-") as scratch:
            work = (args.work or Path(scratch)).resolve()
            for drive in args.drive or sorted(PLAN):
                fits = calibrate(build.binary, drive, work, report=lambda s: print(s, flush=True))
                text = calibrated_text(drive, fits)
                target = drive_config(drive).with_name(drive + SUFFIX + ".cfg")
                if args.write:
                    target.write_text(text)
                    print(f"{drive}: wrote {target}")
                elif args.check:
                    same = target.is_file() and target.read_text() == text
                    print(f"{drive}: {target.name} {'is' if same else 'is NOT'} the search's")
                    if not same:
                        differ.append(target.name)
        return 1 if differ else 0
    except StudyError as error:
        print(f"simplessd_calibration: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
