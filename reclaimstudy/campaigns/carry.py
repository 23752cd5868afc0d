"""Unfinished gem5 runs carried from one machine to the next.

A segmented gem5 run keeps its saved segments on the machine that runs it
(results/STUDY/.checkpoints/RUN_ID, backends/gem5/segments.py). A run longer than what is left of a
session (the desktop's 1.7-2.4 hours, once gem5 is built on a new machine) would start
from its boot on every new machine and never finish. `./study carry STUDY` packs each
unfinished run's saved segments (their outputs and the newest checkpoint) into
results/published/STUDY/in-flight/, an xz tar split into parts of at most 4 MiB
(RUN_ID.tar.xz.000, .001, ...: a repository keeps no file over 5 MiB) beside a small
RUN_ID.json that says how far it got and each part's size and sha256; they are
committed with the study. `./study publish STUDY --restore` unpacks
them on the next machine, and the sweep resumes each from its newest checkpoint. That
is what any segment boundary is anyway (a restore), so a carried run is the run never
interrupted, as long as the next machine's gem5 simulates as the last one's did (the
same release, patches, variant, options and compiler: the run id holds them all, so
another simulator is another run and its segments are never used). Each segment
records the binary that made it (segments.json, gem5_sha256).

An archive is dropped once its run has finished (its run.json is in the study folder)
when the study is carried or published again.

A finished run that is not published yet is carried too, as what publishing would keep
of it: its run.json and its rows of the study's table (in-flight/finished/RUN_ID/, both
text), so a machine that goes away between a run's end and the study's next publish
takes nothing with it; restoring puts it back as a restored run (run.json and
rows.parquet), which a sweep counts as done and the table reads as its rows. Only the
runs the table keeps are carried; how many it set aside is carried as a count, as
publishing does. They are dropped at the next publish. The study's sweep log is carried
beside them.
"""

import hashlib
import json
import os
import shutil
import tarfile
import time
from pathlib import Path

from reclaimstudy.backends.gem5.segments import (  # noqa: F401 (COMPLETE: tests use carry.COMPLETE)
    COMPLETE, DISK_LOST, saved_progress, saved_segments)
from reclaimstudy.campaigns.rundir import partial_name, this_host
from reclaimstudy.errors import StudyError
from reclaimstudy.results.record import CHECKPOINTS, PARTIAL
from reclaimstudy.util.progress import console

IN_FLIGHT = "in-flight"
# Finished runs not yet published, each as its run.json and ROWS (in-flight/FINISHED/RUN_ID/).
FINISHED = "finished"
ROWS = "rows.json"
# Beside them: how many runs the carrying machine's table set aside that no restore brings back.
SET_ASIDE = "set-aside.json"
ARCHIVE = ".tar.xz"
# The largest part of a split archive: under the 5 MiB a file in the repository may be.
PART_BYTES = 4 * 2**20
# Below this much gem5 CPU time saved (30 minutes), a run is cheaper to redo than to
# commit as a binary into every clone's history.
DEFAULT_MIN_CPU_S = 1800.0


def unfinished(study_path: Path) -> list[tuple[str, Path, list[Path]]]:
    """(run id, its folder of segments, the saved ones) for every run of the study that
    saved a segment and has not finished; a run that lost its disk restarts, so it has
    nothing worth carrying."""
    found = []
    for work in sorted((study_path / CHECKPOINTS).glob("*")):
        if not work.is_dir() or (study_path / work.name / "run.json").is_file() \
                or (work / DISK_LOST).is_file():
            continue
        segments = saved_segments(work)
        if segments:
            found.append((work.name, work, segments))
    return found


def _snapshot(segments: list[Path], into: Path) -> None:
    """Hard links to the saved segments' files: a sweep that saves the next segment
    meanwhile deletes the newest checkpoint, which the links keep whole."""
    for directory in segments:
        shutil.copytree(directory, into / directory.name, copy_function=os.link)
    if not (into / segments[-1].name / "cpt" / "m5.cpt").is_file():
        raise FileNotFoundError(f"{segments[-1]}/cpt: the newest checkpoint went meanwhile")


def manifests(target: Path) -> dict[str, dict]:
    """The carried runs of a published study folder, by run id."""
    folder = target / IN_FLIGHT
    return {path.stem: json.loads(path.read_text()) for path in sorted(folder.glob("*.json"))} \
        if folder.is_dir() else {}


def _drop(folder: Path, run_id: str) -> None:
    """Remove a carried run: its parts (or the single archive that carry made before it
    split them), then its manifest."""
    for path in [folder / f"{run_id}{ARCHIVE}", *folder.glob(f"{run_id}{ARCHIVE}.[0-9][0-9][0-9]")]:
        path.unlink(missing_ok=True)
    (folder / f"{run_id}.json").unlink(missing_ok=True)


def _split(archive: Path, folder: Path, run_id: str, part_bytes: int) -> list[dict]:
    """Cut archive into folder/RUN_ID.tar.xz.NNN of at most part_bytes each; returns
    each part's name, size and sha256 (in order)."""
    parts: list[dict] = []
    with archive.open("rb") as whole:
        while chunk := whole.read(part_bytes):
            name = f"{run_id}{ARCHIVE}.{len(parts):03d}"
            (folder / name).write_bytes(chunk)
            parts.append({"name": name, "bytes": len(chunk),
                          "sha256": hashlib.sha256(chunk).hexdigest()})
    return parts


def _join(folder: Path, run_id: str, manifest: dict, into: Path) -> None:
    """Write the carried archive of run_id to into: its parts end to end, each checked
    against the manifest, or the single archive of a run carried before parts."""
    if "parts" not in manifest:
        single = folder / f"{run_id}{ARCHIVE}"
        if not single.is_file():
            raise StudyError(f"{single}: missing, though {folder / f'{run_id}.json'} names it")
        shutil.copyfile(single, into)
        return
    with into.open("wb") as whole:
        for number, part in enumerate(manifest["parts"], 1):
            path = folder / part["name"]
            if not path.is_file():
                raise StudyError(f"{path}: missing, though {folder / f'{run_id}.json'} names it "
                                 f"(part {number} of {len(manifest['parts'])}); not unpacked")
            data = path.read_bytes()
            digest = hashlib.sha256(data).hexdigest()
            if digest != part["sha256"]:
                raise StudyError(f"{path}: sha256 {digest[:16]}, its manifest says "
                                 f"{part['sha256'][:16]} (damaged or from another packing); "
                                 f"not unpacked")
            whole.write(data)


def drop_finished(study_path: Path, target: Path) -> list[str]:
    """Remove the archives of runs that have finished in study_path."""
    done = [run_id for run_id in manifests(target)
            if (study_path / run_id / "run.json").is_file()]
    for run_id in done:
        _drop(target / IN_FLIGHT, run_id)
    return done


def pack(study_path: Path, target: Path, min_cpu_s: float = DEFAULT_MIN_CPU_S,
         part_bytes: int = PART_BYTES) -> dict:
    """Carry the study's unfinished runs (those with at least min_cpu_s of gem5 CPU time
    saved) into target/in-flight/; an archive already as far along is left as it is.
    Returns what was packed, kept, skipped and dropped."""
    if min_cpu_s < 0:
        raise StudyError(f"--min-cpu-s {min_cpu_s}: must be 0 or more (gem5 CPU seconds)")
    folder = target / IN_FLIGHT
    outcome: dict[str, list] = {"packed": [], "up_to_date": [], "too_short": [],
               "dropped": drop_finished(study_path, target)}
    carried = manifests(target)
    for run_id, work, segments in unfinished(study_path):
        for attempt in range(3):
            segments = saved_segments(work)
            done = saved_progress(segments)
            if done["cpu_seconds"] < min_cpu_s:
                outcome["too_short"].append((run_id, done))
                break
            if carried.get(run_id, {}).get("segments", 0) >= done["segments"]:
                outcome["up_to_date"].append((run_id, carried[run_id]))
                break
            snapshot = study_path / f".carry-{run_id}"
            shutil.rmtree(snapshot, ignore_errors=True)
            try:
                _snapshot(segments, snapshot)
            except FileNotFoundError:  # a segment was saved meanwhile: take the new one
                shutil.rmtree(snapshot, ignore_errors=True)
                if attempt == 2:
                    raise
                continue
            folder.mkdir(parents=True, exist_ok=True)
            started = time.monotonic()
            console.print(f"carry: packing {run_id} ({done['segments']} segments, "
                          f"{done['cpu_seconds']:,.0f} gem5 CPU-s)")
            # Packed outside the published folder, then split into it: an interrupted
            # packing leaves the run's earlier parts and manifest as they were.
            whole = study_path / f".carry-{run_id}{ARCHIVE}"
            with tarfile.open(whole, "w:xz") as archive:
                for directory in sorted(snapshot.iterdir()):
                    archive.add(directory, arcname=directory.name)
            shutil.rmtree(snapshot)
            _drop(folder, run_id)
            parts = _split(whole, folder, run_id, part_bytes)
            whole.unlink()
            manifest = {"run_id": run_id, **done, "bytes": sum(p["bytes"] for p in parts),
                        "parts": parts,
                        "packed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                        "host": this_host(), "pack_seconds": round(time.monotonic() - started, 1)}
            (folder / f"{run_id}.json").write_text(json.dumps(manifest, indent=1) + "\n")
            outcome["packed"].append((run_id, manifest))
            break
    return outcome


def _safe_members(archive: tarfile.TarFile, name: str) -> list[tarfile.TarInfo]:
    """Only plain files and folders below the archive's own root (no links, devices or
    paths that climb out)."""
    members = archive.getmembers()
    for member in members:
        parts = Path(member.name).parts
        if member.name.startswith("/") or ".." in parts or not (member.isfile() or member.isdir()) \
                or not parts[0].startswith("seg-"):
            raise StudyError(f"{name}: member '{member.name}' is not a saved segment's file; "
                             f"not unpacked")
    return members


def unpack(study_path: Path, target: Path) -> list[tuple[str, dict]]:
    """Put the carried runs' segments into study_path/.checkpoints/ where this machine has
    fewer saved segments of them (and has not finished them). Returns those unpacked."""
    unpacked = []
    for run_id, manifest in manifests(target).items():
        if (study_path / run_id / "run.json").is_file():
            continue
        work = study_path / CHECKPOINTS / run_id
        if len(saved_segments(work)) >= manifest["segments"]:
            continue
        source = target / IN_FLIGHT / f"{run_id}{ARCHIVE}"
        if manifest.get("parts"):
            source = source.with_name(f"{source.name}.000-{len(manifest['parts']) - 1:03d}")
        staging = work.with_name(f"{run_id}.unpacking")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        joined = work.with_name(f"{run_id}.joined{ARCHIVE}")
        try:
            _join(target / IN_FLIGHT, run_id, manifest, joined)
            with tarfile.open(joined, "r:xz") as archive:
                archive.extractall(staging, members=_safe_members(archive, str(source)))
        except StudyError:
            shutil.rmtree(staging)
            raise
        finally:
            joined.unlink(missing_ok=True)
        held = len(saved_segments(staging))
        if held != manifest["segments"]:
            shutil.rmtree(staging)
            raise StudyError(f"{source}: holds {held} saved segments, its manifest says "
                             f"{manifest['segments']}; not unpacked")
        shutil.rmtree(work, ignore_errors=True)
        staging.rename(work)
        unpacked.append((run_id, manifest))
    return unpacked


def carried_finished(target: Path) -> list[str]:
    """The run ids of the finished runs carried in a published study folder (a folder
    being written, .RUN_ID.new, is none)."""
    folder = target / IN_FLIGHT / FINISHED
    return sorted(p.name for p in folder.iterdir()
                  if not p.name.startswith(".") and (p / ROWS).is_file()) \
        if folder.is_dir() else []


def drop_finished_runs(target: Path, study_path: Path) -> list[str]:
    """Remove the carried finished runs that a publish from study_path has dealt with:
    every one whose run is in study_path (the publish either published it or counted it
    set aside), with the carried set-aside counts and any carrying cut short."""
    folder = target / IN_FLIGHT / FINISHED
    done = [run_id for run_id in carried_finished(target)
            if (study_path / run_id / "run.json").is_file()]
    for run_id in done:
        shutil.rmtree(folder / run_id)
    for stale in folder.glob(".*.new") if folder.is_dir() else []:
        shutil.rmtree(stale)
    (folder / SET_ASIDE).unlink(missing_ok=True)
    return done


def _to_carry(kept: list, target: Path) -> list:
    """The kept finished runs (status ok) that target neither publishes nor carries."""
    carried = set(carried_finished(target))
    return [run for run in kept if run.record.get("status") == "ok"
            and run.record["run_id"] not in carried
            and not (target / run.record["run_id"] / "run.json").is_file()]


def pack_finished(study, study_path: Path, target: Path) -> list[str]:
    """Carry each finished run that the study's table keeps (study_folder_runs) and that
    target neither publishes nor carries yet: its run.json and its table rows. Beside
    them, SET_ASIDE: how many runs the table set aside that no restore brings back
    (those not published), which a restore counts as set aside before. Returns the run
    ids carried."""
    from analysis.table import run_rows, study_folder_runs, study_runs

    found = study_runs(study_path, study.name)
    kept, superseded, outdated = study_folder_runs(study, study_path, found)
    folder = target / IN_FLIGHT / FINISHED
    packed = []
    for run in _to_carry(kept, target):
        run_id = run.record["run_id"]
        staging = folder / f".{run_id}.new"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        (staging / ROWS).write_text("".join(json.dumps(r, sort_keys=True) + "\n"
                                            for r in run_rows(run)))
        shutil.copy2(run.directory / "run.json", staging / "run.json")
        staging.rename(folder / run_id)
        packed.append(run_id)
    # Set-aside runs that are published come back with a restore and are set aside there
    # again; the others are only counted.
    points = study.points()
    kept_ids = {run.record["run_id"] for run in kept}
    back = [run for run in found if run.record["run_id"] not in kept_ids
            and (target / run.record["run_id"] / "run.json").is_file()]
    back_outdated = sum(1 for run in back if run.current_schema and run.point_key not in points)
    counts = {"superseded": superseded - (len(back) - back_outdated),
              "outdated": outdated - back_outdated}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / SET_ASIDE).write_text(json.dumps(counts, indent=2) + "\n")
    return packed


def carried_set_aside(target: Path) -> dict | None:
    """The set-aside counts carried with the finished runs (pack_finished), if any."""
    path = target / IN_FLIGHT / FINISHED / SET_ASIDE
    return json.loads(path.read_text()) if path.is_file() else None


def unpack_finished(study_path: Path, target: Path) -> list[str]:
    """Put the carried finished runs back into study_path, each as a restored run
    (run.json and rows.parquet, as restore.py leaves a published one), where the folder
    has no finished run of that id (a failed attempt there is replaced)."""
    import pandas as pd

    from reclaimstudy.campaigns.restore import RESTORED_ROWS
    from reclaimstudy.results.record import read_run

    unpacked = []
    for run_id in carried_finished(target):
        here = read_run(study_path / run_id) if (study_path / run_id).is_dir() else None
        if here is not None and here.record.get("status") == "ok":
            continue
        source = target / IN_FLIGHT / FINISHED / run_id
        lines = (source / ROWS).read_text().splitlines()
        staging = study_path / PARTIAL / partial_name(run_id)
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        pd.DataFrame.from_records([json.loads(line) for line in lines]).to_parquet(
            staging / RESTORED_ROWS, index=False)
        shutil.copy2(source / "run.json", staging / "run.json")
        if (study_path / run_id).exists():
            shutil.rmtree(study_path / run_id)
        staging.rename(study_path / run_id)
        unpacked.append(run_id)
    return unpacked


def only_here(study, study_path: Path, target: Path) -> list[str]:
    """The runs carry would carry (kept, finished, neither published nor carried): the
    runs a machine that goes away takes with it."""
    from analysis.table import study_folder_runs

    if not study_path.is_dir():
        return []
    return [run.record["run_id"] for run in _to_carry(study_folder_runs(study, study_path)[0], target)]
