"""A gem5 run in segments, each ending in a checkpoint that the next one restores, so a
run killed part-way resumes from its newest checkpoint instead of from the boot.

Segments end at every phase boundary of the guest and on a grid of simulated time
(configs/gem5/reclaim_fs.py, class Segment). Every boundary is a restore whether or not
the run was killed: gem5 does not checkpoint its caches, so restoring only after a kill
would make a resumed run differ from an uninterrupted one. The schedule is in
simulated time, never host time, for the same reason: it is part of the run's identity
(RunSpec.checkpoints).

Each segment's gem5 output is kept in WORK/seg-NNN/ (WORK: results/STUDY/.checkpoints/
RUN_ID) until the run completes, with complete.json once its checkpoint is saved; only
the newest checkpoint is kept. The run directory gets the segments joined: stats.txt
(with stats-partial.json naming the blocks cut mid-phase), console.log, gem5's logs,
and segments.json (how each segment ended and its host time).
"""

import json
import re
import shutil
import time
from pathlib import Path

from reclaimstudy.results.gem5_stats import BEGIN, PARTIAL_FILE

COMPLETE = "complete.json"
# Left in WORK by a run that lost its disk: the segments before the one that showed it
# may have lost it unseen (libata reports 30 simulated s after the lost interrupt), so
# the run is redone from its boot checkpoint rather than resumed.
DISK_LOST = "disk-lost.json"
# gem5's name for the first UART's output file (board.pc.com_1, stdlib X86Board).
CONSOLE = "board.pc.com_1.device"
# What Linux prints when a disk command got no answer: libata's error handler after its
# 30-s command timeout, then the block layer's failed request. A run that shows either has
# lost its disk (seen once: every later command timed out too, and the guest idled on
# until the host-time limit, hours later), so its numbers mean nothing.
DISK_ERROR = re.compile(r"^.*(?:ata\d+(?:\.\d+)?: exception Emask|I/O error, dev ).*$", re.M)


def guest_disk_error(segments: list[Path]) -> str | None:
    """The first console line, over the given segments, where the guest's disk failed."""
    for directory in segments:
        console = directory / CONSOLE
        if console.is_file():
            found = DISK_ERROR.search(console.read_text(errors="replace"))
            if found:
                return f"{directory.name}: {found.group(0).strip()}"
    return None


def completed(work: Path) -> list[Path]:
    """The segments that saved their checkpoint, in order; throws away one cut short."""
    found = []
    for index in range(10_000):
        directory = work / f"seg-{index:03d}"
        if not (directory / COMPLETE).is_file():
            break
        found.append(directory)
    for directory in work.glob("seg-*"):
        if directory not in found:
            shutil.rmtree(directory, ignore_errors=True)
    return found


def progress(work: Path) -> str | None:
    """How far a segmented run has got, for a sweep's status line: its saved segments, the
    simulated time its newest checkpoint reached (gem5's clock, boot included) and the
    simulator's CPU time over them; None before the first segment is saved."""
    saved = saved_progress(saved_segments(work))
    if not saved["segments"]:
        return None
    return (f"{saved['segments']} segment(s) saved, simulated to {saved['sim_seconds']:.1f} s, "
            f"{saved['cpu_seconds']:,.0f} gem5 CPU-s")


def saved_segments(work: Path) -> list[Path]:
    """The segments of `work` that saved their checkpoint, in order. Read only: a sweep may
    be writing the next one (completed, which tidies, is the sweep's)."""
    found: list[Path] = []
    while (work / f"seg-{len(found):03d}" / COMPLETE).is_file():
        found.append(work / f"seg-{len(found):03d}")
    return found


def saved_progress(segments: list[Path]) -> dict:
    """Saved segments, the simulated time reached and gem5's CPU time over them."""
    results = [json.loads((d / COMPLETE).read_text()) for d in segments]
    return {"segments": len(segments),
            "sim_seconds": results[-1].get("sim_seconds") if results else None,
            "cpu_seconds": round(sum(r.get("host", {}).get("cpu_seconds") or 0
                                     for r in results), 1)}


def run_segmented(simulate, params: dict, boot_checkpoint: Path, every_sim_s: float,
                  work: Path, run_dir: Path, timeout_s: float) -> dict:
    """Simulate segment after segment until the guest exits or something fails; join the
    segments' outputs into run_dir. `simulate(params, outdir, timeout_s)` runs gem5 once.
    Returns the last segment's result, with the run's host figures and segment count."""
    work.mkdir(parents=True, exist_ok=True)
    if (work / DISK_LOST).is_file():
        shutil.rmtree(work)
        work.mkdir()
    done = completed(work)
    resumed_at = len(done)
    started = time.monotonic()
    while True:
        previous = json.loads((done[-1] / COMPLETE).read_text()) if done else None
        outdir = work / f"seg-{len(done):03d}"
        left = max(60.0, timeout_s - (time.monotonic() - started))
        segment_params = dict(
            params, checkpoint=str(done[-1] / "cpt" if done else boot_checkpoint),
            max_host_seconds=left,
            segment={"every_sim_s": every_sim_s, "at_phases": True, "save_to": str(outdir / "cpt"),
                     "phases_begun": bool(previous and previous["segment"]["phases_begun"])})
        result = simulate(segment_params, outdir, left + 300)
        # Even a run that went on to exit waited 30 s on its disk: it fails too. One with
        # the error stops here rather than simulate an idle guest to the time limit.
        failed = guest_disk_error([outdir])
        if failed:
            result = {**result, "status": "guest-disk-error",
                      "detail": f"the guest's disk stopped answering ({failed})"}
            (work / DISK_LOST).write_text(json.dumps({"segment": outdir.name,
                                                      "console": failed}) + "\n")
            break
        if result["status"] != "segment":
            break
        (outdir / COMPLETE).write_text(json.dumps(result, indent=1) + "\n")
        if done:  # the newest checkpoint is all a resumed run needs
            shutil.rmtree(done[-1] / "cpt", ignore_errors=True)
        done.append(outdir)
    segments = done + [outdir]
    summary = join_outputs(segments, result, run_dir)
    if result["status"] == "exit":  # complete: its checkpoints have served
        shutil.rmtree(work, ignore_errors=True)
    host = dict(result["host"])
    host["wall_seconds"] = round(sum(s["host_wall_seconds"] for s in summary), 2)
    host["cpu_seconds"] = round(sum(s.get("host_cpu_seconds") or 0 for s in summary), 2)
    host["max_rss_mib"] = max(s["host_max_rss_mib"] or 0 for s in summary)
    lowered = [f"{s['segment']:03d}: {pin}" for s in summary for pin in s["pins_lowered"]]
    return {**result, "host": host, "segments": len(segments), "resumed_at_segment": resumed_at,
            "pins_lowered": lowered,
            "drive_backlog_max": backlog_max([s["drives_at_restore"] for s in summary])}


def backlog_max(restores: list[dict]) -> dict:
    """What the restores carried over (gem5-patches/0004), the most at any one of them."""
    drives = [d for restore in restores for d in restore.values()]
    return {key: max((d[key] for d in drives), default=0.0) for key in ("cached_kib", "busy_ms")}


def join_outputs(segments: list[Path], last: dict, run_dir: Path) -> list[dict]:
    """The segments' outputs as one run's: stats blocks in order (and which are partial),
    the guest console, gem5's logs; segments.json says how each ended."""
    summary, partial, blocks = [], [], 0
    with open(run_dir / "stats.txt", "w") as stats, \
            open(run_dir / "console.log", "w") as console:
        for index, directory in enumerate(segments):
            result = last if index == len(segments) - 1 else \
                json.loads((directory / COMPLETE).read_text())
            text = (directory / "stats.txt").read_text() if (directory / "stats.txt").is_file() else ""
            stats.write(text)
            blocks += text.count(BEGIN)
            cut = result.get("segment") or {}
            if cut.get("partial_block"):
                partial.append(blocks - 1)
            guest = directory / CONSOLE
            if guest.is_file():
                console.write(guest.read_text(errors="replace"))
            summary.append({"segment": index, "status": result["status"],
                            "ended": cut.get("why"), "tick": cut.get("tick"),
                            "partial_block": bool(cut.get("partial_block")),
                            "sim_seconds": result.get("sim_seconds"),
                            "host_wall_seconds": result["host"]["wall_seconds"],
                            "host_cpu_seconds": result["host"].get("cpu_seconds"),
                            "host_max_rss_mib": result["host"].get("max_rss_mib"),
                            "gem5_sha256": result["host"].get("gem5_sha256"),
                            "pins_lowered": result.get("pins_lowered", []),
                            "drives_at_restore": result.get("drives_at_restore", {})})
    (run_dir / PARTIAL_FILE).write_text(json.dumps({"partial_blocks": partial}) + "\n")
    (run_dir / "segments.json").write_text(json.dumps(summary, indent=1) + "\n")
    for name in ("gem5.log", "simout.txt", "simerr.txt"):
        with open(run_dir / name, "w") as joined:
            for index, directory in enumerate(segments):
                if (directory / name).is_file():
                    joined.write(f"=== segment {index} ===\n")
                    joined.write((directory / name).read_text(errors="replace"))
    for name in ("config.ini", "config.json"):
        if (segments[0] / name).is_file():
            shutil.copy2(segments[0] / name, run_dir / name)
    shutil.copy2(segments[-1] / "params.json", run_dir / "params.json")
    return summary
