"""What a profile's [disk.timing] predicts for the guest's IO patterns, from its
parameters alone: the same arithmetic as gem5-patches/' HddTiming and FlashTiming
(src/dev/storage/disk_timing.cc), in expectation. The calibration test holds what
the guest measures on gem5 against these numbers.

Only the analytic model ([disk.timing] model = "hdd" or "flash") has a prediction. A
drive timed by DiskSim or SimpleSSD answers from its simulator's state (angular
position, buffer segments, flash translation, garbage collection), which no formula
here holds: its reference is that simulator run standalone (why_no_prediction).
"""

import math
from collections.abc import Mapping

from pydantic import BaseModel
from scipy import integrate

from reclaimstudy.config.systems import FlashTiming, HddTiming
from reclaimstudy.errors import StudyError

SECTOR = 512
# gem5's IdeDisk speaks 28-bit ATA: one command moves at most 256 sectors.
MAX_COMMAND_BYTES = 256 * SECTOR
MB = 1e6
MIB = 1 << 20
ANALYTIC_MODELS = ("hdd", "flash")
# Per outside simulator: what a disk-calib run on it is held to, and where.
REFERENCES = {
    "disksim": "DiskSim standalone, tests/test_disksim_gem5.py (the drive in gem5 answers "
               "every request as DiskSim standalone does)",
    "simplessd": "SimpleSSD standalone, tests/test_simplessd_gem5.py (the drive in gem5 "
                 "answers every command as SimpleSSD standalone does)",
}
NOT_ANALYTIC = ("the analytic prediction (reclaimstudy/config/disk_model.py) does not apply: "
                "it times only [disk.timing] model = \"hdd\" or \"flash\"")


class NoPrediction(StudyError):
    """Asked for the analytic prediction of a disk the analytic model does not time."""


def why_no_prediction(timing) -> str | None:
    """None when the analytic model times this disk; otherwise, plainly, what times it
    and what its disk-calib measurements are held to instead. `timing` is a profile's
    [disk.timing] or the dict a run's identity recorded of it (None: gem5's fixed delay)."""
    if isinstance(timing, (HddTiming, FlashTiming)):
        return None
    if timing is None:
        return ("its disk has no [disk.timing]: gem5's own fixed delay per DMA descriptor "
                "(delay_us), which the analytic model does not time; no prediction applies")
    facts = timing.model_dump() if isinstance(timing, BaseModel) else timing
    if not isinstance(facts, Mapping):
        return f"{timing!r} is not a [disk.timing] table; allowed: model = \"hdd\" or \"flash\""
    model = facts.get("model")
    if model in ANALYTIC_MODELS:
        # A recorded dict: the caller validates it (every parameter recorded) first.
        return None
    if model == "disksim":
        kind = "validated by DiskSim's authors" if facts.get("validated") else \
            f"{len(facts.get('overrides', []))} DiskSim parameters overridden"
        what = f"DiskSim 4.0 ({facts.get('drive')}; {facts.get('rpm')} rpm; {kind})"
    elif model == "simplessd":
        # A run's identity leaves out the validation's wording; a profile has it.
        validation = facts.get("validation", "")
        validated = f"; {validation.split(':')[0]}" if validation else ""
        what = (f"SimpleSSD 2.0 ({facts.get('drive')}; configs/simplessd/"
                f"{facts.get('config')}{validated})")
    else:
        return (f"its [disk.timing] model = {model!r} is not one the analytic prediction "
                f"knows; allowed: {', '.join(repr(m) for m in ANALYTIC_MODELS)}")
    return f"its disk is timed by {what}; {NOT_ANALYTIC}; its reference is {REFERENCES[model]}"


def _analytic(timing) -> HddTiming | FlashTiming:
    """The timing itself, if the analytic model times it: anything else is refused,
    never priced as flash or with a default parameter."""
    if isinstance(timing, (HddTiming, FlashTiming)):
        return timing
    raise NoPrediction(why_no_prediction(timing) or
                       f"{type(timing).__name__}: the analytic prediction takes a profile's "
                       f"validated [disk.timing] (HddTiming or FlashTiming), not {timing!r}")


def rotation_s(hdd: HddTiming) -> float:
    return 60.0 / hdd.rpm


def seek_exponent(hdd: HddTiming) -> float:
    """e in seek(x) = t2t + (full - t2t) x^e: for x the distance between two uniform
    positions, E[x^e] = 2 / ((e+1)(e+2)), and e makes that mean the datasheet average."""
    ratio = ((hdd.seek_average_ms - hdd.seek_track_to_track_ms)
             / (hdd.seek_full_stroke_ms - hdd.seek_track_to_track_ms))
    return (-3.0 + math.sqrt(1.0 + 8.0 / ratio)) / 2.0


def seek_s(hdd: HddTiming, fraction: float) -> float:
    """Seek time over a distance given as a fraction of the full stroke."""
    fraction = min(max(fraction, 0.0), 1.0)
    span = hdd.seek_full_stroke_ms - hdd.seek_track_to_track_ms
    return (hdd.seek_track_to_track_ms + span * fraction ** seek_exponent(hdd)) / 1e3


def track_sectors(hdd: HddTiming) -> int:
    """Sectors passing under the head in one rotation: closer than this, no seek."""
    return max(1, int(rotation_s(hdd) * hdd.media_mb_s * MB / SECTOR))


def stroke(hdd: HddTiming, image_sectors: int) -> int:
    return hdd.stroke_sectors or image_sectors


def mean_seek_s(hdd: HddTiming, span_sectors: int, image_sectors: int) -> float:
    """Mean seek between two uniform positions inside a region of `span_sectors`: the
    distance d has density 2(L - d)/L^2, and distances under a track need no seek."""
    length, near, full = float(span_sectors), track_sectors(hdd), stroke(hdd, image_sectors)
    if length <= near:
        return 0.0
    value, _ = integrate.quad(
        lambda d: seek_s(hdd, d / full) * 2.0 * (length - d) / length ** 2, near, length,
        limit=200)
    return value


def random_access_s(timing, write: bool, size: int, span_sectors: int = 0,
                    image_sectors: int = 0) -> float:
    """Mean time of one command at a random place in a region (a durable write: on
    the media, as after a cache flush)."""
    timing = _analytic(timing)
    if isinstance(timing, HddTiming):
        overhead = timing.write_overhead_ms if write else timing.read_overhead_ms
        return (overhead / 1e3 + mean_seek_s(timing, span_sectors, image_sectors)
                + rotation_s(timing) / 2 + size / (timing.media_mb_s * MB))
    return flash_command_s(timing, write, size)


def flash_command_s(flash: FlashTiming, write: bool, size: int) -> float:
    if write:
        return (flash.write_overhead_us + flash.write_latency_us) / 1e6 + size / (
            flash.write_mb_s * MB)
    return (flash.read_overhead_us + flash.read_latency_us) / 1e6 + size / (flash.read_mb_s * MB)


def sequential_mb_s(timing, write: bool, total: int = 0, span_sectors: int = 0,
                    image_sectors: int = 0) -> float:
    """Throughput of back-to-back commands of the largest size, in MB/s: a drive
    streams on at its media rate; a flash device pays its latency per command. Given
    the `total` bytes of one stream, a drive's first command also finds its place (a
    random access within `span_sectors`)."""
    timing = _analytic(timing)
    if isinstance(timing, HddTiming):
        rate = min(timing.media_mb_s, timing.interface_mb_s) * MB
        if not total:
            return rate / MB
        first = random_access_s(timing, write, 0, span_sectors, image_sectors)
        return total / (first + total / rate) / MB
    return MAX_COMMAND_BYTES / flash_command_s(timing, write, MAX_COMMAND_BYTES) / MB


def writes_s(timing, commands: int, size: int) -> float:
    """Time for `commands` back-to-back sequential writes moving `size` bytes in all, as
    the host sees them complete (the swap-out prediction, given the commands the kernel
    issued). A drive's write-back cache, empty at first, takes writes at the host link
    rate while the media drains it; once it is full, writes go at the media rate."""
    timing = _analytic(timing)
    if isinstance(timing, HddTiming):
        link, media = timing.interface_mb_s * MB, timing.media_mb_s * MB
        overhead = commands * timing.write_overhead_ms / 1e3
        cache = timing.write_cache_mib * MIB
        if cache == 0 or link <= media:
            return overhead + size / media
        fills_at = cache / (link - media)  # when the cache is full
        if size <= link * fills_at:
            return overhead + size / link
        return overhead + fills_at + (size - link * fills_at) / media
    return (commands * (timing.write_overhead_us + timing.write_latency_us) / 1e6
            + size / (timing.write_mb_s * MB))


def predicted_calibration(timing, file_sectors: int, image_sectors: int = 0,
                          swap_commands: int = 0, swap_bytes: int = 0,
                          read_bytes: int = 0, write_bytes: int = 0) -> dict[str, float]:
    """What disk-calib's metrics should be on a disk with these parameters: random 4 KiB
    commands within its file of `file_sectors`, streams of the largest commands, and
    (given the write commands the swap-out phase issued and the bytes they moved) the
    swap-out time per MiB. The guest's own time per request is not in it. A disk the
    analytic model does not time raises NoPrediction (ask why_no_prediction first)."""
    timing = _analytic(timing)
    out = {
        "random_4k_latency_s": random_access_s(timing, False, 4096, file_sectors, image_sectors),
        "sequential_mib_s": sequential_mb_s(timing, False, read_bytes, file_sectors,
                                            image_sectors) * MB / MIB,
        "random_4k_write_latency_s": random_access_s(timing, True, 4096, file_sectors,
                                                     image_sectors),
        "sequential_write_mib_s": sequential_mb_s(timing, True, write_bytes, file_sectors,
                                                  image_sectors) * MB / MIB,
    }
    if swap_commands and swap_bytes:
        out["swap_out_s_per_mib"] = writes_s(timing, swap_commands, swap_bytes) / (
            swap_bytes / MIB)
    return out


# A disk that takes no time: what the guest measures on it is its own IO path (system
# calls, block layer, the IDE registers, interrupts) on the profile's CPU.
# (gem5 keeps a bandwidth as whole ticks per byte: 10^12 B/s is 1 tick, the least.)
NULL_DISK = {"model": "flash", "device": "none: a disk that takes no time",
             "read_latency_us": 0.001, "write_latency_us": 0.001, "read_mb_s": 1e6,
             "write_mb_s": 1e6, "interface_mb_s": 1e6}


def null_disk(system):
    """The same system with a disk that takes no time (one boot serves both)."""
    return system.changed(name=f"{system.name}-null-disk", disk={"timing": NULL_DISK})
