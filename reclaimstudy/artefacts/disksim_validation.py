"""DiskSim's own validation of its drive models, run here as its `valid/runvalid` runs
it, with the comparison computed by our own code and checked against DiskSim's.

runvalid replays, for each of ten SCSI drives, a trace of requests measured on the
real drive (`valid/<drive>.trace`: each request with its measured times) through
DiskSim's model of that drive (`valid/<drive>.parv`), in DiskSim's `validate` mode. The
output holds two distributions of the access time: the measured one ("VALIDATE Trace
access time distribution") and the simulated one ("IOdriver Physical access time
distribution"). Its figure of merit is the RMS distance between them: the root mean
square of the difference between the two distributions' quantiles, at every 0.01% from
0.01% to 100%, each quantile interpolated linearly between the distribution's rows (in
ms). runvalid prints DiskSim's `rms` program's figure beside the value it expects,
rounded to three decimals.

We read the drives, their files and the expected figures from the checkout's runvalid
(refusing one that runs differently), run `disksim` on each exactly as it does, and
compute the distance ourselves from the output (`rms_distance`); DiskSim's `rms` is
also run on the same output, so the two computations check each other.
"""

import bisect
import math
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from reclaimstudy.artefacts.disksim import DisksimBuild
from reclaimstudy.errors import StudyError

SIMULATED = "IOdriver Physical access time distribution"
MEASURED = "VALIDATE Trace access time distribution"
QUANTILE_STEP = 0.0001  # runvalid's: every 0.01%

# runvalid's two lines a drive:
#   echo "IBM_DNES-309170W (rms should be about 0.135)"
#   ${PREFIX}/disksim ibm18es.parv ibm18es.outv validate ibm18es.trace 0\
#   && ${PREFIX}/rms ibm18es.outv ibm18es.outv -1 -1 1
EXPECTED_LINE = re.compile(r'^echo\s+"(?P<label>\S.*?)\s+\(rms should be about (?P<rms>[0-9.]+)\)"')
VALIDATE_LINE = re.compile(
    r"^\$\{PREFIX\}/disksim\s+(?P<parv>\S+)\s+(?P<outv>\S+)\s+validate\s+(?P<trace>\S+)\s+0\s*\\?$")
# `rms OUT OUT -1 -1 1`: the simulated physical access times (device -1: all, 1: service
# times) of OUT against the measured ones (-1: the VALIDATE distribution) of OUT.
RMS_LINE = re.compile(
    r"^&&\s*\$\{PREFIX\}/rms\s+(?P<first>\S+)\s+(?P<second>\S+)\s+-1\s+-1\s+1\s*$")
# The external-control example: syssim drives DiskSim through disksim_interface.h.
SYSSIM_EXPECTED = re.compile(
    r'^echo\s+"syssim: .*\(avg\. resp should be about (?P<ms>[0-9.]+) msec\)"')
SYSSIM_LINE = re.compile(
    r"^\$\{PREFIX\}/syssim\s+(?P<parv>\S+)\s+(?P<outv>\S+)\s+(?P<sectors>\d+)\s*\\?$")
RESPONSE_AVERAGE = re.compile(r"^IOdriver Response time average:\s+([0-9.]+)\s*$", re.M)


@dataclass(frozen=True)
class ValidationCase:
    """One drive as runvalid validates it."""
    label: str             # runvalid's name for the drive, e.g. "IBM_DNES-309170W"
    expected_rms: float    # runvalid's "rms should be about", ms (rounded to 0.001)
    parameters: str        # e.g. "ibm18es.parv"
    output: str            # e.g. "ibm18es.outv"
    trace: str             # the requests measured on the real drive


@dataclass(frozen=True)
class InterfaceCase:
    """runvalid's check of the embedding interface (src/syssim_driver.c)."""
    expected_ms: float     # "avg. resp should be about", ms (rounded to 0.1)
    parameters: str
    output: str
    sectors: int


def runvalid_cases(valid_dir: Path) -> list[ValidationCase]:
    """The drives runvalid validates, with the figure it expects for each."""
    runvalid = valid_dir / "runvalid"
    try:
        lines = runvalid.read_text().splitlines()
    except OSError as error:
        raise StudyError(f"{runvalid}: cannot read DiskSim's validation script: {error}")
    cases = []
    for number, line in enumerate(lines):
        expected = EXPECTED_LINE.match(line.strip())
        if not expected:
            continue
        following = [lines[i].strip() for i in range(number + 1, min(number + 3, len(lines)))]
        run = VALIDATE_LINE.match(following[0]) if following else None
        compare = RMS_LINE.match(following[1]) if len(following) > 1 else None
        if not (run and compare and compare["first"] == compare["second"] == run["outv"]):
            raise StudyError(
                f"{runvalid}:{number + 1}: '{expected['label']}' is not followed by the two "
                f"lines this project reproduces (`${{PREFIX}}/disksim P.parv P.outv validate "
                f"P.trace 0` and `&& ${{PREFIX}}/rms P.outv P.outv -1 -1 1`), but by "
                f"{following!r}: not the runvalid of DiskSim 4.0's STABLE tree")
        cases.append(ValidationCase(expected["label"], float(expected["rms"]), run["parv"],
                                    run["outv"], run["trace"]))
    if not cases:
        raise StudyError(f"{runvalid} validates no drive (no 'rms should be about' line): "
                         f"not the runvalid of DiskSim 4.0's STABLE tree")
    return cases


def runvalid_interface_case(valid_dir: Path) -> InterfaceCase:
    lines = (valid_dir / "runvalid").read_text().splitlines()
    for number, line in enumerate(lines):
        expected = SYSSIM_EXPECTED.match(line.strip())
        if expected and number + 1 < len(lines):
            run = SYSSIM_LINE.match(lines[number + 1].strip())
            if run:
                return InterfaceCase(float(expected["ms"]), run["parv"], run["outv"],
                                     int(run["sectors"]))
    raise StudyError(f"{valid_dir / 'runvalid'} has no syssim check (an 'avg. resp should be "
                     f"about' line followed by `${{PREFIX}}/syssim P.parv OUT SECTORS`)")


def distribution(text: str, title: str, where: str) -> tuple[list[float], list[float]]:
    """A distribution DiskSim printed: its rows' values (ms) and cumulative fractions,
    from the line `title` up to the first row whose cumulative fraction reaches 1."""
    lines = text.splitlines()
    try:
        start = lines.index(title) + 1
    except ValueError:
        raise StudyError(f"{where}: no '{title}' (not a DiskSim validate-mode output?)")
    values: list[float] = []
    cumulative: list[float] = []
    for number in range(start, len(lines)):
        fields = lines[number].split()
        try:
            value, _count, _fraction, total = (float(f) for f in fields)
        except ValueError:
            break
        if cumulative and total < cumulative[-1]:
            raise StudyError(f"{where}:{number + 1}: '{title}' falls from {cumulative[-1]} to "
                             f"{total}: a cumulative fraction cannot fall")
        values.append(value)
        cumulative.append(total)
        if total >= 1.0:
            return values, cumulative
    last = cumulative[-1] if cumulative else "-"
    raise StudyError(f"{where}: '{title}' ends (line {start + len(values) + 1}) before its "
                     f"cumulative fraction reaches 1 (last {last})")


def quantile(values: list[float], cumulative: list[float], q: float) -> float:
    """The value below which a fraction q falls, linear between the rows around it."""
    i = bisect.bisect_left(cumulative, q)  # the first row that reaches q
    if i == 0:
        return values[0]
    low, high = cumulative[i - 1], cumulative[i]
    return values[i - 1] + (q - low) / (high - low) * (values[i] - values[i - 1])


def quantile_points() -> list[float]:
    """0.0001, 0.0002, ... up to 1, stepped as DiskSim's rms steps them: by adding 0.0001
    in floating point. Where a distribution's cumulative fraction equals a point exactly
    (every row of a 10,000-request trace does) and then stays flat for some rows, the
    point's rounding decides which end of the flat stretch its quantile takes. Other
    roundings of the same points move runvalid's figures: the exact k / 10,000 by up to
    0.00001 ms, k * 0.0001 by up to 0.00025 ms (HP C2247A)."""
    points, q = [], QUANTILE_STEP
    while q <= 1.0:
        points.append(q)
        q += QUANTILE_STEP
    return points


def rms_distance(first: tuple[list[float], list[float]],
                 second: tuple[list[float], list[float]], points: list[float] | None = None
                 ) -> float:
    """Root mean square of the difference between two distributions' quantiles, at every
    0.01% from 0.01% to 100% (DiskSim's measure of a model against a drive), in ms."""
    points = points or quantile_points()
    total = sum((quantile(*first, q) - quantile(*second, q)) ** 2 for q in points)
    return math.sqrt(total / len(points))


@dataclass(frozen=True)
class Drive:
    """What a validation's parameter files say about its drive."""
    name: str                 # DiskSim's name of the disk, e.g. "IBM_DNES-309170W_validate"
    model_file: str
    rpm: float | None
    blocks: int | None
    surfaces: int | None
    cylinders: int | None

    @property
    def capacity_gb(self) -> float | None:
        return None if self.blocks is None else self.blocks * 512 / 1e9


def _number(pattern: str, text: str, kind=float):
    match = re.search(pattern + r"\s*=\s*([0-9.]+)", text)
    return kind(match[1]) if match else None


def drive_of(valid_dir: Path, parameters: str) -> Drive:
    """The disk a parameter file instantiates, and its model's mechanics."""
    parv = (valid_dir / parameters).read_text(errors="replace")
    disks = re.findall(r"instantiate\s*\[\s*disk\S*\s*\]\s*as\s+(\S+)", parv)
    if not disks:
        raise StudyError(f"{valid_dir / parameters}: instantiates no disk")
    name = disks[0]
    for sourced in [parameters] + re.findall(r"^\s*source\s+(\S+)", parv, re.M):
        specs = (valid_dir / sourced).read_text(errors="replace")
        block = re.search(r"disksim_disk\s+" + re.escape(name)
                          + r"\s*\{(.*?)Model\s*=\s*source\s+(\S+?),", specs, re.S)
        if block:
            break
    else:
        raise StudyError(f"{valid_dir / parameters}: no 'disksim_disk {name}' with a "
                         f"'Model = source FILE' in it or the files it sources")
    model_file = block[2]
    model = (valid_dir / model_file).read_text(errors="replace")
    return Drive(name, model_file, _number(r"Rotation speed \(in rpms\)", model),
                 _number(r"Block count", model, int),
                 _number(r"Number of data surfaces", model, int),
                 _number(r"Number of cylinders", model, int))


@dataclass(frozen=True)
class DriveResult:
    case: ValidationCase
    drive: Drive
    requests: int             # requests in the measured trace
    rms: float                # ours (rms_distance), ms
    rms_disksim: float        # DiskSim's `rms` on the same output, ms (6 decimals)
    seconds: float            # the disksim run's wall time

    @property
    def difference(self) -> float:
        return self.rms - self.case.expected_rms


def _run(cmd: list, cwd: Path, what: str) -> str:
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, errors="replace")
    if result.returncode != 0:
        raise StudyError(f"{what} failed (exit {result.returncode}) in {cwd}:\n"
                         f"{(result.stdout + result.stderr)[-3000:]}")
    return result.stdout


def validate_drive(build: DisksimBuild, work: Path, case: ValidationCase) -> DriveResult:
    """One drive, in `work` (a copy of the validation folder: DiskSim writes its outputs,
    and a log_sim_results.csv, where it runs)."""
    started = time.monotonic()
    _run([build.binary, case.parameters, case.output, "validate", case.trace, "0"], work,
         f"disksim on {case.label} ({case.parameters})")
    seconds = time.monotonic() - started
    printed = _run([build.rms, case.output, case.output, "-1", "-1", "1"], work,
                   f"DiskSim's rms on {case.output}")
    match = re.search(r"rms = ([0-9.]+)", printed)
    if not match:
        raise StudyError(f"DiskSim's rms on {work / case.output} printed no 'rms = ': {printed!r}")
    text = (work / case.output).read_text(errors="replace")
    where = str(work / case.output)
    ours = rms_distance(distribution(text, SIMULATED, where), distribution(text, MEASURED, where))
    requests = sum(1 for line in (work / case.trace).read_text().splitlines() if line.strip())
    return DriveResult(case, drive_of(work, case.parameters), requests, ours,
                       float(match[1]), seconds)


def validate(build: DisksimBuild, on_result=None) -> list[DriveResult]:
    """Every drive runvalid validates, in its order; `on_result(result)` after each."""
    with tempfile.TemporaryDirectory(prefix="disksim-valid-") as scratch:
        work = Path(scratch) / "valid"
        shutil.copytree(build.validation_dir, work)
        results = []
        for case in runvalid_cases(work):
            results.append(validate_drive(build, work, case))
            if on_result:
                on_result(results[-1])
        return results


def interface_check(build: DisksimBuild) -> tuple[float, float]:
    """runvalid's syssim run (DiskSim driven through disksim_interface.h by its example
    system simulator): the average response time it gives and the one runvalid expects."""
    with tempfile.TemporaryDirectory(prefix="disksim-syssim-") as scratch:
        work = Path(scratch) / "valid"
        shutil.copytree(build.validation_dir, work)
        case = runvalid_interface_case(work)
        _run([build.syssim, case.parameters, case.output, str(case.sectors)], work,
             f"DiskSim's syssim on {case.parameters}")
        match = RESPONSE_AVERAGE.search((work / case.output).read_text(errors="replace"))
        if not match:
            raise StudyError(f"syssim's output {case.output} has no 'IOdriver Response time "
                             f"average'")
        return float(match[1]), case.expected_ms
