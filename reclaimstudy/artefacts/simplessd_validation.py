"""SimpleSSD's model of a named drive against that drive's published measurements (issue
77): the synthetic workloads a drive's specification and its reviews measure, run on
SimpleSSD-Standalone (reclaimstudy/artefacts/simplessd.py), and what the drive's maker and
an independent review published for each.

A workload is SimpleSSD-Standalone's request generator ([generator], like fio's options)
behind the drive's own interface (DRIVE_INTERFACES): a SATA drive behind our SATA link
(simplessd-patches/0004, the driver's Interface = 2), an NVMe drive behind SimpleSSD's
NVMe controller driven by the standalone driver's NVMe host (Interface = 1: one I/O
queue pair of 1,024 entries, each DMA timed on the drive's PCIe link, host memory and
interrupts free), a phone's eMMC behind our eMMC bus in HS400 mode (0006, Interface = 4,
one command at a time). No host overhead is added between requests (SubmissionLatency =
CompletionLatency = 0): the simulated latency of a request is the device's alone, from
its command leaving the host to its completion reaching it. Published queue-depth-1
latencies are 1 / IOPS of the maker's QD1 figure, which also holds the test machine's
own I/O stack (a few microseconds).
"""

import re
import resource
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from reclaimstudy.errors import StudyError
from reclaimstudy.paths import CONFIGS

DRIVES = CONFIGS / "simplessd"
# SimpleSSD-Standalone's [global] Interface for each host interface, and the commands
# each lets a host keep outstanding: SATA's NCQ 32; NVMe, the standalone driver's one
# I/O submission queue of 1,024 entries (sil/nvme/nvme.hh), of which 1,023 can be full.
# eMMC 5.0, behind our HS400 bus (simplessd-patches/0006), has no command queue.
INTERFACES = {"sata": 2, "nvme": 1, "emmc": 4}
MAX_DEPTH = {"sata": 32, "nvme": 1023, "emmc": 1}
DEPTH_LIMIT = {"sata": "SATA's NCQ allows 1 to 32",
               "nvme": "the standalone driver's NVMe I/O queue (1,024 entries) allows 1 to "
                       "1023",
               "emmc": "eMMC 5.0 serves one command at a time (1 only)"}
# The generator's seed for random offsets: any fixed value, so a run is repeatable.
RANDOM_SEED = 77


@dataclass(frozen=True)
class Workload:
    """One synthetic workload: fio-like access pattern, request size, queue depth and the
    bytes it moves (`io_size`, in SimpleSSD's units: K, M, G)."""
    pattern: str        # read, write, randread, randwrite
    block: str          # request size
    depth: int          # requests outstanding
    io_size: str        # bytes in all


@dataclass(frozen=True)
class Measurement:
    """A published figure of a drive, what it measures and where it was published."""
    name: str
    workload: Workload
    metric: str         # "latency_us" (mean), "iops" or "mb_s" (10^6 bytes a second)
    published: float
    source: str
    independent: str    # what an independent review measured, or why it is not given


@dataclass(frozen=True)
class Result:
    """What one simulated workload gave, and what it cost the host."""
    requests: int
    simulated_s: float
    bytes: int
    mean_latency_us: float
    host_cpu_s: float
    wall_s: float

    @property
    def iops(self) -> float:
        return self.requests / self.simulated_s

    @property
    def mb_s(self) -> float:
        return self.bytes / self.simulated_s / 1e6

    def metric(self, name: str) -> float:
        return {"latency_us": self.mean_latency_us, "iops": self.iops, "mb_s": self.mb_s}[name]


# The six figures a drive's specification gives, each with its workload and what it
# measures: every drive's measurements name them alike.
SPEC_FIGURES = {
    "4 KiB random read, QD1": (Workload("randread", "4K", 1, "16M"), "latency_us"),
    "4 KiB random write, QD1": (Workload("randwrite", "4K", 1, "16M"), "latency_us"),
    "4 KiB random read, QD32": (Workload("randread", "4K", 32, "64M"), "iops"),
    "4 KiB random write, QD32": (Workload("randwrite", "4K", 32, "64M"), "iops"),
    "128 KiB sequential read, QD32": (Workload("read", "128K", 32, "1G"), "mb_s"),
    "128 KiB sequential write, QD32": (Workload("write", "128K", 32, "2G"), "mb_s"),
}


def _figure(name: str, published: float, source: str, independent: str) -> Measurement:
    """One of SPEC_FIGURES, as a drive's maker and a review published it."""
    workload, metric = SPEC_FIGURES[name]
    return Measurement(name, workload, metric, published, source, independent)


# Samsung SSD 850 PRO 256 GB (configs/simplessd/samsung-850-pro-256gb.cfg).
SPEC_850_PRO = ("Samsung's 850 PRO specification (256 GB), as reproduced in Ubergizmo's review "
                "and Samsung's 2014 launch release (cdrinfo.com)")
TOMS_850_PRO = ("Tom's Hardware, \"Samsung 850 Pro SSD Review: 3D Vertical NAND Hits Desktop "
                "Storage\", 4 KB random read page")
SAMSUNG_850_PRO_256 = (
    _figure("4 KiB random read, QD1",
            1e6 / 10_000, SPEC_850_PRO + ": 10,000 IOPS at QD1 (1 / IOPS)",
            TOMS_850_PRO + ": \"right around 10,000 IOPS at a queue depth of one\""),
    _figure("4 KiB random write, QD1",
            1e6 / 36_000, SPEC_850_PRO + ": 36,000 IOPS at QD1 (1 / IOPS)",
            "none found in the stored reviews"),
    _figure("4 KiB random read, QD32",
            100_000, SPEC_850_PRO + ": 100,000 IOPS at QD32",
            TOMS_850_PRO + ": \"smoothly step up to 100,000 IOPS at a queue depth of 32\""),
    _figure("4 KiB random write, QD32",
            90_000, SPEC_850_PRO + ": 90,000 IOPS at QD32",
            "Tom's Hardware (SM951 NVMe vs AHCI review, 2015): Samsung's figure is reached "
            "fresh, not after Tom's preconditioning; no number given"),
    _figure("128 KiB sequential read, QD32",
            550, SPEC_850_PRO + ": 550 MB/s",
            "CrystalDiskMark 551.4 MB/s for the 256 GB, 512 GB and 1 TB drives "
            "(cloudycircuitry.blogspot.com, 2015-05, \"samsungssd850pro256gb-512gb-and-1tb\")"),
    _figure("128 KiB sequential write, QD32",
            520, SPEC_850_PRO + ": 520 MB/s (256 GB, 512 GB, 1 TB)",
            "none found in the stored reviews"),
)

# Samsung SSD 950 PRO 256 GB (configs/simplessd/samsung-950-pro-256gb.cfg), an NVMe drive.
# Samsung's own conditions for its figures (tool, threads, preconditioning) are not in the
# stored copies of the specification; Tom's Hardware (its SM951-NVMe RAID report) writes
# that Samsung specifies these drives with four workers. The independent figures are each
# review's own, the capacity as said.
SPEC_950_PRO = ("Samsung's 950 PRO specification (256 GB), as reproduced in Ubergizmo's "
                "review and in AnandTech's 960 PRO review's comparison table")
OCAHOLIC_950_PRO = ("ocaholic.ch, Samsung 950 Pro M.2 review (item 3932), conclusion: the "
                    "capacity tested is not named there; its 924 MB/s sequential write "
                    "matches the 256 GB's rating (900 MB/s), not the 512 GB's (1,500)")
SAMSUNG_950_PRO_256 = (
    _figure("4 KiB random read, QD1",
            1e6 / 11_000, SPEC_950_PRO + ": 11,000 IOPS at QD1 (1 / IOPS)",
            OCAHOLIC_950_PRO + ": 12,700 IOPS at QD1 (78.7 us)"),
    _figure("4 KiB random write, QD1",
            1e6 / 43_000, SPEC_950_PRO + ": 43,000 IOPS at QD1 (1 / IOPS)",
            OCAHOLIC_950_PRO + ": 58,000 IOPS at QD1 (17.2 us)"),
    _figure("4 KiB random read, QD32",
            270_000, SPEC_950_PRO + ": 270,000 IOPS at QD32",
            "none found for the 256 GB as a number (AnandTech's and Tom's Hardware's "
            "queue-depth sweeps are charts)"),
    _figure("4 KiB random write, QD32",
            85_000, SPEC_950_PRO + ": 85,000 IOPS at QD32",
            "none found as a number; AnandTech (\"Samsung 950 Pro SSD Review\", random "
            "write page): the 950 Pro's random writes run about 20% below the SM951's"),
    _figure("128 KiB sequential read, QD32",
            2_200, SPEC_950_PRO + ": 2,200 MB/s",
            OCAHOLIC_950_PRO + ": 1,868 MB/s"),
    _figure("128 KiB sequential write, QD32",
            900, SPEC_950_PRO + ": 900 MB/s",
            "Golem.de (\"Samsung 950 Pro im Test\", page 2, the 256 GB): about 900 MB/s "
            "writing 128 KiB at QD1 for three minutes, then 700 MB/s when it throttles "
            "at 80 degrees; ocaholic.ch: 924 MB/s"),
)
# Samsung eMMC 5.0 "eMMC PRO" 32 GB (configs/simplessd/samsung-emmc-pro-32gb.cfg). eMMC 5.0
# has no command queue, so every figure is at queue depth 1, the maker's random IOPS too;
# the sequential workloads use 512 KiB commands, the largest Linux's SDHCI host driver
# sends (max_req_size), as no transfer size is published with the maker's figures.
SPEC_EMMC_PRO = ("Samsung's eMMC 5.0 mass-production announcement, July 2013, for its 32 and "
                 "64 GB parts (SamMobile, 2013-07-27; Engadget)")
PHONEARENA_2015 = ("PhoneArena's AndroBench of 2014's flagships (2015-03, as reported by "
                   "gadgetdaily.xyz and juggly.cn)")
EMMC_PRO_32 = (
    Measurement("4 KiB random read, QD1", Workload("randread", "4K", 1, "16M"), "latency_us",
                1e6 / 7_000, SPEC_EMMC_PRO + ": 7,000 random read IOPS (1 / IOPS)",
                PHONEARENA_2015 + ": Galaxy Note 4 (32 GB Samsung eMMC 5.0) 20.56 MB/s of 4 KB "
                "random reads, about 5,000-5,300 IOPS (190-200 us through its file system); "
                "GSMArena (2015): Galaxy S5 (16 GB) 4,858 IOPS"),
    Measurement("4 KiB random write, QD1", Workload("randwrite", "4K", 1, "16M"), "latency_us",
                1e6 / 7_000, SPEC_EMMC_PRO + ": 7,000 random write IOPS (1 / IOPS)",
                PHONEARENA_2015 + ": below the Xperia Z3's 9.26 MB/s, the best of the eMMC "
                "phones (under about 2,300 IOPS); no number for the Note 4"),
    Measurement("512 KiB sequential read, QD1", Workload("read", "512K", 1, "1G"), "mb_s",
                250, SPEC_EMMC_PRO + ": 250 MB/s",
                "The Tech Report, Galaxy Note 4 (Exynos) review: 204 MB/s average read"),
    Measurement("512 KiB sequential write, QD1", Workload("write", "512K", 1, "1G"), "mb_s",
                90, SPEC_EMMC_PRO + ": 90 MB/s",
                "none found with a number in the stored reviews"),
)
DRIVE_MEASUREMENTS = {"samsung-850-pro-256gb": SAMSUNG_850_PRO_256,
                      "samsung-950-pro-256gb": SAMSUNG_950_PRO_256,
                      "samsung-emmc-pro-32gb": EMMC_PRO_32}
# The host interface each drive is measured through (its maker's).
DRIVE_INTERFACES = {"samsung-850-pro-256gb": "sata", "samsung-950-pro-256gb": "nvme",
                    "samsung-emmc-pro-32gb": "emmc"}


def drive_config(name: str) -> Path:
    """configs/simplessd/NAME.cfg, refused naming the drives there when it does not exist."""
    path = DRIVES / f"{name}.cfg"
    if not path.is_file():
        known = sorted(p.stem for p in DRIVES.glob("*.cfg"))
        raise StudyError(f"no SimpleSSD drive '{name}': configs/simplessd/ has "
                         f"{', '.join(known) or 'none'}")
    return path


def simulation_config(workload: Workload, interface: str) -> str:
    """SimpleSSD-Standalone's own configuration for one run of `workload` through
    `interface` ("sata" or "nvme"; its [global] and [generator] sections: the drive is
    the other file)."""
    if interface not in INTERFACES:
        *others, last = INTERFACES
        raise StudyError(f"interface '{interface}': use {', '.join(others)} or {last}")
    if workload.pattern not in ("read", "write", "randread", "randwrite"):
        raise StudyError(f"workload pattern '{workload.pattern}': use read, write, randread "
                         f"or randwrite")
    if not 1 <= workload.depth <= MAX_DEPTH[interface]:
        raise StudyError(f"queue depth {workload.depth}: {DEPTH_LIMIT[interface]}")
    return "\n".join([
        "[global]",
        "Mode = 0",                      # the request generator, not a trace
        "LogPeriod = 0",
        "LogFile = STDOUT",
        "DebugLogFile =",
        "LatencyLogFile = latency.csv",  # id, offset, length, latency (ps), a request a line
        "ProgressPeriod = 0",
        f"Interface = {INTERFACES[interface]}",
        "Scheduler = 0",
        "SubmissionLatency = 0",
        "CompletionLatency = 0",
        "[generator]",
        f"io_size = {workload.io_size}",
        f"readwrite = {workload.pattern}",
        "rwmixread = 0.5",
        f"blocksize = {workload.block}",
        "blockalign =",
        "iomode = async",
        f"iodepth = {workload.depth}",
        "offset = 0",
        "size =",
        "thinktime = 0",
        f"randseed = {RANDOM_SEED}",
        "time_based = 0",
        "runtime = 0",
        "",
    ])


def parse_run(stdout: str, latency_log: Path) -> tuple[int, float, int, float]:
    """Requests, simulated seconds, bytes and mean latency (us) of one run, from the
    generator's statistics and the latency log; a run without them is an error naming
    what is missing."""
    span = re.search(r"^Time \(ps\): (\d+) - (\d+)", stdout, re.M)
    moved = re.search(r"^I/O \(bytes\): (\d+)", stdout, re.M)
    if not span or not moved:
        raise StudyError("SimpleSSD's output has no request generator statistics "
                         "('Time (ps):' and 'I/O (bytes):'); its tail:\n" + stdout[-2000:])
    latencies = [int(line.rsplit(",", 1)[1]) for line in
                 latency_log.read_text().splitlines() if line.strip()]
    if not latencies:
        raise StudyError(f"{latency_log}: SimpleSSD logged no request")
    simulated_s = (int(span[2]) - int(span[1])) / 1e12
    return len(latencies), simulated_s, int(moved[1]), sum(latencies) / len(latencies) / 1e6


def run_workload(binary: Path, drive: Path, workload: Workload, directory: Path,
                 interface: str) -> Result:
    """One workload on one drive through `interface`, in `directory` (its configuration,
    output and log)."""
    directory.mkdir(parents=True, exist_ok=True)
    sim = directory / "simulation.cfg"
    sim.write_text(simulation_config(workload, interface))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    proc = subprocess.run([str(binary), str(sim), str(drive), str(directory)],
                          cwd=directory, capture_output=True, text=True)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    (directory / "stdout.txt").write_text(proc.stdout)
    (directory / "stderr.txt").write_text(proc.stderr)
    if proc.returncode != 0:
        raise StudyError(f"SimpleSSD exited {proc.returncode} on {drive.name} with {workload}; "
                         f"its output is in {directory}:\n{proc.stderr[-2000:]}")
    requests, simulated_s, moved, latency_us = parse_run(proc.stdout, directory / "latency.csv")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Result(requests, simulated_s, moved, latency_us, cpu, wall)


def error(result: Result, measurement: Measurement) -> float:
    """(simulated - published) / published."""
    return result.metric(measurement.metric) / measurement.published - 1

