"""Unfinished gem5 runs carried to a new machine (reclaimstudy/campaigns/carry.py): packed from one
study folder's saved segments, unpacked into another's, never over a run that is further
along or finished there. The real round trip through gem5 is in tests/test_gem5.py."""

import io
import json
import random
import shutil
import tarfile
from pathlib import Path

import pytest

from reclaimstudy.campaigns import carry
from reclaimstudy.errors import StudyError
from reclaimstudy.results.record import CHECKPOINTS

RUN = "desktop-launch-baseline-desktop-hdd-64-r0-gem5-0123456789"


def save_segment(work: Path, index: int, cpu_seconds: float = 500.0):
    """A segment as backends/gem5/segments.py leaves it: outputs, complete.json, its checkpoint; the
    one before loses its checkpoint (only the newest is kept)."""
    directory = work / f"seg-{index:03d}"
    (directory / "cpt").mkdir(parents=True)
    (directory / "stats.txt").write_text(f"---------- Begin Simulation Statistics ----------\n"
                                         f"simSeconds {index + 1}.0\n")
    (directory / "board.pc.com_1.device").write_text(f"console of segment {index}\n")
    (directory / "cpt" / "m5.cpt").write_text(f"[root]\nsegment={index}\n")
    (directory / "cpt" / "board.physmem.store0.pmem").write_bytes(bytes(4096) * 64)
    (directory / carry.COMPLETE).write_text(json.dumps(
        {"status": "segment", "sim_seconds": 2.0 * (index + 1),
         "host": {"cpu_seconds": cpu_seconds}, "segment": {"phases_begun": True}}))
    if index:
        shutil.rmtree(work / f"seg-{index - 1:03d}" / "cpt")
    return directory


def unfinished_run(study_path: Path, run_id: str = RUN, saved: int = 3, cpu_seconds=700.0):
    work = study_path / CHECKPOINTS / run_id
    for index in range(saved):
        save_segment(work, index, cpu_seconds)
    # The segment gem5 is writing when the session ends: no complete.json.
    (work / f"seg-{saved:03d}").mkdir()
    (work / f"seg-{saved:03d}" / "stats.txt").write_text("half written")
    return work


def files_of(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def test_a_run_packed_on_one_machine_resumes_from_its_newest_checkpoint_on_another(tmp_path):
    old, new, target = tmp_path / "old" / "study", tmp_path / "new" / "study", tmp_path / "published"
    work = unfinished_run(old)
    outcome = carry.pack(old, target, min_cpu_s=1000)
    [(run_id, manifest)] = outcome["packed"]
    assert run_id == RUN
    assert {k: manifest[k] for k in ("segments", "sim_seconds", "cpu_seconds")} == \
        {"segments": 3, "sim_seconds": 6.0, "cpu_seconds": 2100.0}
    assert [part["name"] for part in manifest["parts"]] == [f"{RUN}.tar.xz.000"]
    assert manifest["bytes"] == (target / carry.IN_FLIGHT / f"{RUN}.tar.xz.000").stat().st_size
    assert json.loads((target / carry.IN_FLIGHT / f"{RUN}.json").read_text()) == manifest
    # The zeros of a guest's memory pack small.
    assert manifest["bytes"] < 64 * 4096 / 10

    assert carry.unpack(new, target) == [(RUN, manifest)]
    moved = new / CHECKPOINTS / RUN
    assert carry.saved_segments(moved) == [moved / f"seg-{i:03d}" for i in range(3)]
    saved = {k: v for k, v in files_of(work).items() if not k.startswith("seg-003")}
    assert files_of(moved) == saved
    assert (moved / "seg-002" / "cpt" / "m5.cpt").is_file()
    assert not (moved / "seg-001" / "cpt").exists()


def test_an_archive_already_as_far_along_is_kept_and_a_further_run_is_packed_again(tmp_path):
    study, target = tmp_path / "study", tmp_path / "published"
    work = unfinished_run(study, saved=2, cpu_seconds=1000)
    [(_, first)] = carry.pack(study, target)["packed"]
    again = carry.pack(study, target)
    assert again["packed"] == [] and [r for r, _ in again["up_to_date"]] == [RUN]
    shutil.rmtree(work / "seg-002")
    save_segment(work, 2, 800)
    [(_, second)] = carry.pack(study, target)["packed"]
    assert (first["segments"], second["segments"]) == (2, 3)


def test_runs_with_little_saved_are_not_carried(tmp_path):
    study, target = tmp_path / "study", tmp_path / "published"
    unfinished_run(study, saved=2, cpu_seconds=300)
    outcome = carry.pack(study, target, min_cpu_s=1200)
    assert outcome["packed"] == []
    assert [(r, m["cpu_seconds"]) for r, m in outcome["too_short"]] == [(RUN, 600.0)]
    assert not (target / carry.IN_FLIGHT).exists()
    with pytest.raises(StudyError, match=r"--min-cpu-s -1: must be 0 or more"):
        carry.pack(study, target, min_cpu_s=-1)


def test_finished_runs_and_runs_that_lost_their_disk_are_not_carried_and_finished_ones_dropped(
        tmp_path):
    study, target = tmp_path / "study", tmp_path / "published"
    unfinished_run(study, saved=3, cpu_seconds=1000)
    carry.pack(study, target)
    lost = unfinished_run(study, run_id=RUN.replace("r0", "r1"), saved=3, cpu_seconds=1000)
    (lost / carry.DISK_LOST).write_text("{}")
    # The first run finishes here: its run.json is in place (its segments are gone too).
    (study / RUN).mkdir()
    (study / RUN / "run.json").write_text("{}")
    outcome = carry.pack(study, target)
    assert outcome["dropped"] == [RUN] and outcome["packed"] == []
    assert list((target / carry.IN_FLIGHT).iterdir()) == []


def test_unpacking_never_replaces_a_run_further_along_or_finished_here(tmp_path):
    old, new, target = tmp_path / "old", tmp_path / "new", tmp_path / "published"
    unfinished_run(old, saved=2, cpu_seconds=1000)
    carry.pack(old, target)
    here = unfinished_run(new, saved=3, cpu_seconds=1)
    before = files_of(here)
    assert carry.unpack(new, target) == []
    assert files_of(here) == before
    shutil.rmtree(here)
    (new / RUN).mkdir()
    (new / RUN / "run.json").write_text("{}")
    assert carry.unpack(new, target) == []
    assert not here.exists()


def test_a_segment_saved_while_packing_is_taken_instead_of_the_checkpoint_it_deleted(
        tmp_path, monkeypatch):
    study, target = tmp_path / "study", tmp_path / "published"
    work = unfinished_run(study, saved=2, cpu_seconds=1000)
    real = carry._snapshot
    calls = []

    def sweep_saves_a_segment_first(segments, into):
        # As the sweep does between our listing and our links: seg-002 saved, seg-001's
        # checkpoint deleted.
        if not calls:
            shutil.rmtree(work / "seg-002")
            save_segment(work, 2, 1000)
        calls.append(len(segments))
        real(segments, into)
    monkeypatch.setattr(carry, "_snapshot", sweep_saves_a_segment_first)
    [(_, manifest)] = carry.pack(study, target)["packed"]
    assert calls == [2, 3]
    assert manifest["segments"] == 3
    assert not list(study.glob(".carry-*"))


def test_an_archive_with_anything_but_segment_files_is_refused(tmp_path):
    new, target = tmp_path / "new", tmp_path / "published"
    folder = target / carry.IN_FLIGHT
    folder.mkdir(parents=True)
    with tarfile.open(folder / f"{RUN}.tar.xz", "w:xz") as archive:
        data = b"x"
        member = tarfile.TarInfo("seg-000/../../../escaped")
        member.size = len(data)
        archive.addfile(member, io.BytesIO(data))
    (folder / f"{RUN}.json").write_text(json.dumps({"run_id": RUN, "segments": 1}))
    with pytest.raises(StudyError, match=r"member 'seg-000/\.\./\.\./\.\./escaped' is not a "
                                         r"saved segment's file"):
        carry.unpack(new, target)
    assert not (tmp_path / "escaped").exists()
    assert not (new / CHECKPOINTS / RUN).exists()


def test_an_archive_short_of_its_manifest_is_refused(tmp_path):
    old, new, target = tmp_path / "old", tmp_path / "new", tmp_path / "published"
    unfinished_run(old, saved=2, cpu_seconds=1000)
    carry.pack(old, target)
    manifest = target / carry.IN_FLIGHT / f"{RUN}.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "segments": 5}))
    with pytest.raises(StudyError, match=r"holds 2 saved segments, its manifest says 5"):
        carry.unpack(new, target)
    assert not (new / CHECKPOINTS / RUN).exists()


def incompressible_run(study_path: Path, saved: int = 2) -> Path:
    """A run whose newest checkpoint's memory does not pack small (a guest's page cache)."""
    work = unfinished_run(study_path, saved=saved, cpu_seconds=1000)
    (work / f"seg-{saved - 1:03d}" / "cpt" / "board.physmem.store0.pmem").write_bytes(
        random.Random(18).randbytes(50_000))
    return work


def test_an_archive_over_a_part_is_split_into_parts_that_join_back_whole(tmp_path):
    old, new, target = tmp_path / "old", tmp_path / "new", tmp_path / "published"
    work = incompressible_run(old)
    [(_, manifest)] = carry.pack(old, target, part_bytes=16_000)["packed"]
    folder = target / carry.IN_FLIGHT
    sizes = [(folder / part["name"]).stat().st_size for part in manifest["parts"]]
    assert len(sizes) == 4 and max(sizes) == 16_000 and sizes[-1] < 16_000
    assert [part["bytes"] for part in manifest["parts"]] == sizes and sum(sizes) == manifest["bytes"]
    assert sorted(p.name for p in folder.iterdir()) == \
        [f"{RUN}.json"] + [f"{RUN}.tar.xz.{i:03d}" for i in range(4)]
    assert not list(old.glob(".carry-*"))

    carry.unpack(new, target)
    saved = {k: v for k, v in files_of(work).items() if not k.startswith("seg-002")}
    assert files_of(new / CHECKPOINTS / RUN) == saved
    assert not list((new / CHECKPOINTS).glob(f"{RUN}.*"))


def test_packing_again_replaces_every_part_of_the_run_carried_before(tmp_path):
    study, target = tmp_path / "study", tmp_path / "published"
    work = incompressible_run(study, saved=2)
    carry.pack(study, target, part_bytes=8_000)
    folder = target / carry.IN_FLIGHT
    assert len(list(folder.glob(f"{RUN}.tar.xz.*"))) == 7
    shutil.rmtree(work / "seg-002")
    save_segment(work, 2, 1000)  # its checkpoint's memory is zeros: packs into one part
    [(_, manifest)] = carry.pack(study, target, part_bytes=8_000)["packed"]
    assert sorted(p.name for p in folder.iterdir()) == [f"{RUN}.json", f"{RUN}.tar.xz.000"]
    assert manifest["segments"] == 3


@pytest.mark.parametrize("damage, message", [
    (lambda part: part.write_bytes(part.read_bytes()[:-1] + b"!"),
     r"tar\.xz\.001: sha256 [0-9a-f]{16}, its manifest says [0-9a-f]{16} \(damaged"),
    (lambda part: part.unlink(),
     r"tar\.xz\.001: missing, though .*\.json names it \(part 2 of 4\)"),
])
def test_a_damaged_or_missing_part_is_refused_and_nothing_is_unpacked(tmp_path, damage, message):
    old, new, target = tmp_path / "old", tmp_path / "new", tmp_path / "published"
    incompressible_run(old)
    carry.pack(old, target, part_bytes=16_000)
    damage(target / carry.IN_FLIGHT / f"{RUN}.tar.xz.001")
    with pytest.raises(StudyError, match=message):
        carry.unpack(new, target)
    assert not (new / CHECKPOINTS / RUN).exists()
    assert not list((new / CHECKPOINTS).glob(f"{RUN}.*"))


def test_a_run_carried_as_one_archive_before_parts_still_unpacks_and_is_replaced_by_parts(
        tmp_path):
    old, new, target = tmp_path / "old", tmp_path / "new", tmp_path / "published"
    work = unfinished_run(old, saved=2, cpu_seconds=1000)
    folder = target / carry.IN_FLIGHT
    folder.mkdir(parents=True)
    with tarfile.open(folder / f"{RUN}.tar.xz", "w:xz") as archive:
        for segment in carry.saved_segments(work):
            archive.add(segment, arcname=segment.name)
    (folder / f"{RUN}.json").write_text(json.dumps({"run_id": RUN, "segments": 2}))
    assert [r for r, _ in carry.unpack(new, target)] == [RUN]
    assert len(carry.saved_segments(new / CHECKPOINTS / RUN)) == 2

    shutil.rmtree(work / "seg-002")
    save_segment(work, 2, 1000)
    carry.pack(old, target)
    assert sorted(p.name for p in folder.iterdir()) == [f"{RUN}.json", f"{RUN}.tar.xz.000"]


def test_the_command_says_how_much_it_packed_and_into_how_many_parts(tmp_path, capsys):
    import pandas as pd

    from reclaimstudy.cli import main
    report = tmp_path / "published" / "smoke" / "report"
    report.mkdir(parents=True)
    pd.DataFrame({"run_id": ["x"]}).to_parquet(report / "table.parquet")
    unfinished_run(tmp_path / "smoke", saved=2, cpu_seconds=1000)
    assert main(["carry", "smoke", "--results", str(tmp_path)]) == 0
    out = " ".join(capsys.readouterr().err.split())  # the console writes to stderr
    assert f"packed {RUN}: 2 segments, simulated to 4.0 s, 2,000 gem5 CPU-s, 0.0 MiB in 1 " \
           f"part(s)" in out
    assert "commit " in out and "in-flight" in out
    assert main(["carry", "smoke", "--results", str(tmp_path)]) == 0
    assert f"kept {RUN}: already carried as far (2 segments)" in \
        " ".join(capsys.readouterr().err.split())
