"""A derived DiskSim drive's platters (reclaimstudy/artefacts/disksim_media.py): DiskSim's
model file and seek curve rewritten with a later drive's sectors per track and capacity,
into the cache, for `[disk.timing.media]`.

On the host alone: the rewrite of a small model of our own, the folder gem5 searches, the
profile's identity and the refusals. With DISKSIM (a DiskSim checkout): DiskSim standalone
takes the rewritten IBM 18ES, holds the sectors the rewrite counts, and streams and seeks
as the rewrite says it should."""

import os
import random
import re
import subprocess
from pathlib import Path

import pytest

from reclaimstudy.artefacts import disksim as disksim_build
from reclaimstudy.artefacts.disksim_media import (derived_drive_dir, rewrite_model,
                                                  rewrite_seek)
from reclaimstudy.backends.gem5 import backend as gem5_backend
from reclaimstudy.config.systems import get_system
from reclaimstudy.errors import StudyError
from tests.gem5_drives import gem5_binary, system_toml

DERIVED = "desktop-disksim-ibm18es-sata-64"


def zone(first, last, per_track, empty=0, skew=(10.0, 20.0), slips=(), spares=0):
    slipped = ",\n".join(f"               {s}" for s in slips)
    return f"""         dm_layout_g1_zone {{
            First cylinder number = {first},
            Last cylinder number = {last},
            Blocks per track = {per_track},
            Offset of first block = 0.000000,
            Empty space at zone front = {empty},
            Skew for track switch = {skew[0]:.6f},
            Skew for cylinder switch = {skew[1]:.6f},
            Number of spares = {spares},
            slips = [{chr(10) + slipped + chr(10) + '            ' if slips else ''}],
            defects = []
         }}"""


def model(*zones, cylinders=200, surfaces=2) -> str:
    return f"""dm_disk TEST_model {{
   Number of data surfaces = {surfaces},
   Number of cylinders = {cylinders},
   Block count = 12345,
   Layout Model = dm_layout_g1 {{
      LBN-to-PBN mapping scheme = 0,
      Sparing scheme used = 7,
      Rangesize for sparing = 1,
      Zones = [
{(',' + chr(10)).join(zones)}
      ]
   }},
   Mechanical Model = dm_mech_g1 {{
      Seek type = extracted,
      Full seek curve = test.seek,
      Rotation speed (in rpms) = 7200,
   }}
}}
"""


SEEK = "Seek distances measured: 4\n1,\t1.00000\n2,\t1.50000\n50,\t4.00000\n199,\t9.00000\n"
# Two zones: 100 cylinders at 100 sectors a track (less 200 sectors at the front) and 100
# at 60, two surfaces: 20,000 - 200 + 12,000 = 31,800 sectors.
TWO_ZONES = model(zone(0, 99, 100, empty=200, skew=(10.0, 20.0), slips=(517, 902)),
                  zone(100, 199, 60, skew=(6.0, 12.0)))


def fields(text: str, name: str) -> list[float]:
    return [float(v) for v in re.findall(re.escape(name) + r"\s*=\s*(-?[0-9.]+)", text)]


def test_every_zone_is_scaled_to_the_outer_zones_new_density_and_the_cylinders_to_the_capacity():
    out = rewrite_model(TWO_ZONES, SEEK, outer_blocks_per_track=300, sectors=318_000)
    # (the 600 sectors empty at the front stay 600 sectors whatever the cylinders)
    assert out.track_factor == 3.0 and out.cylinder_factor == pytest.approx(318_600 / 96_000)
    text = out.model
    assert fields(text, "Blocks per track") == [300, 180]
    # the same angles and fractions: skews and the empty front in sectors, times three
    assert fields(text, "Skew for track switch") == [30, 18]
    assert fields(text, "Skew for cylinder switch") == [60, 36]
    assert fields(text, "Empty space at zone front") == [600, 0]
    # cylinders: each zone's span times the cylinder factor, the drive's count with them
    firsts, lasts = fields(text, "First cylinder number"), fields(text, "Last cylinder number")
    assert firsts == [0, 332] and lasts == [331, 663]  # 100 and 200 times 3.31875, rounded
    assert out.cylinders == 664 == fields(text, "Number of cylinders")[0]
    # the sectors the zones hold, as DiskSim counts them, and near what was asked
    assert out.sectors == 332 * 2 * 300 - 600 + 332 * 2 * 180 == fields(text, "Block count")[0]
    assert abs(out.sectors - 318_000) / 318_000 < 0.001
    # the validated drive's slipped sectors are not the derived one's
    assert "517" not in text and text.count("slips = []") == 2
    # the rest of the drive is the validated one's
    assert "Full seek curve = test.seek" in text and "Rotation speed (in rpms) = 7200" in text


def test_the_seek_curve_keeps_its_times_over_distances_scaled_with_the_cylinders():
    out = rewrite_seek(SEEK, 10.0)
    lines = out.splitlines()
    assert lines[0] == "Seek distances measured: 5"
    # one cylinder keeps the first measured time (settling), then every point ten times as far
    assert lines[1:] == ["1,\t1.00000", "10,\t1.00000", "20,\t1.50000", "500,\t4.00000",
                         "1990,\t9.00000"]
    # a factor near one never repeats a distance
    assert rewrite_seek(SEEK, 1.0).splitlines()[1:3] == ["1,\t1.00000", "2,\t1.50000"]


@pytest.mark.parametrize("args, message", [
    ((TWO_ZONES, SEEK, 300, 10_000), r"capacity_sectors = 10000: fewer than the drive holds at "
                                     r"300 sectors a track on its own cylinders \(95400\)"),
    ((TWO_ZONES, SEEK, 300, 1 << 31), r"capacity_sectors = 2147483648: DiskSim counts sectors "
                                      r"in a C int, so 1 to 2147483647"),
    ((TWO_ZONES, "Seek distances measured: 1\n5,\t2.0\n", 300, 318_000),
     r"a seek curve from one cylinder"),
    ((model(zone(0, 199, 100, spares=3)), SEEK, 300, 318_000), r"a zone with spare sectors"),
    (("dm_disk X {\n Number of data surfaces = 2,\n Number of cylinders = 9,\n}", SEEK, 300,
      318_000), r"no dm_layout_g1_zone blocks"),
])
def test_a_model_the_rewrite_does_not_know_is_refused_saying_why(args, message):
    with pytest.raises(StudyError, match=message):
        rewrite_model(*args)


def valid_folder(tmp_path: Path) -> tuple[Path, Path]:
    valid = tmp_path / "valid"
    valid.mkdir()
    (valid / "test.diskspecs").write_text(
        "disksim_disk TEST {\n   Model = source test.model,\n   Avg sectors per cylinder = 159,\n}\n")
    (valid / "test.model").write_text(TWO_ZONES)
    (valid / "test.seek").write_text(SEEK)
    (valid / "statdefs").write_text("stats\n")
    parv = tmp_path / "ours.parv"
    parv.write_text("disksim_global Global {}\nsource test.diskspecs\n")
    return valid, parv


def test_the_folder_gem5_searches_has_the_rewritten_drive_beside_the_builds_other_files(
        tmp_path, monkeypatch):
    monkeypatch.setenv("RECLAIMSTUDY_CACHE", str(tmp_path / "cache"))
    valid, parv = valid_folder(tmp_path)
    folder = derived_drive_dir(valid, parv, 300, 318_000)
    assert folder.parent == tmp_path / "cache" / "disksim-drives"
    assert fields((folder / "test.model").read_text(), "Blocks per track") == [300, 180]
    assert (folder / "test.seek").read_text().splitlines()[3] == "7,\t1.50000"
    # the specification's average sectors per cylinder is the rewritten drive's
    assert fields((folder / "test.diskspecs").read_text(), "Avg sectors per cylinder") == [
        round(318_120 / 664)]
    assert (folder / "statdefs").is_symlink() and (folder / "statdefs").read_text() == "stats\n"
    assert (valid / "test.model").read_text() == TWO_ZONES  # the build is never changed
    # made once: the same inputs find it; other platters or another build's files do not
    (folder / "test.model").write_text("kept")
    assert derived_drive_dir(valid, parv, 300, 318_000) == folder
    assert (folder / "test.model").read_text() == "kept"
    assert derived_drive_dir(valid, parv, 200, 318_000) != folder
    (valid / "test.seek").write_text(SEEK.replace("9.00000", "9.5"))
    assert derived_drive_dir(valid, parv, 300, 318_000) != folder


def test_the_derived_profile_has_the_2009_drives_platters_and_the_validated_one_none():
    derived = get_system(DERIVED)
    media = derived.disk.timing.media
    assert (media.outer_blocks_per_track, media.capacity_sectors) == (2673, 1_953_525_168)
    assert "platters" in derived.disk.timing.drive and "Wong" in derived.disk.timing.sources
    # the platters and the rewrite's rules are part of the drive; the validated drive's
    # identity has no media key (its runs keep their ids)
    assert derived.identity()["disk"]["timing"]["media"] == {
        "outer_blocks_per_track": 2673, "capacity_sectors": 1_953_525_168, "rewrite": 1}
    assert "media" not in get_system("desktop-disksim-ibm18es-64").identity()["disk"]["timing"]


def test_a_validated_drive_with_other_platters_is_refused(tmp_path):
    (tmp_path / "bad.toml").write_text(system_toml(
        {"profile": "hdd", "swap_mib": 256},
        {"model": "disksim", "drive": "IBM 18ES: validated", "validated": True,
         "parameters": "ibm18es-ide.parv", "rpm": 7200})
        + "[disk.timing.media]\nouter_blocks_per_track = 2673\ncapacity_sectors = 1000000\n")
    with pytest.raises(StudyError, match=r"a validated drive is DiskSim's model as shipped: no "
                                         r"overrides and no media"):
        get_system("bad", tmp_path)


def test_gem5_searches_the_rewritten_drive_only_for_a_derived_one(tmp_path, monkeypatch):
    monkeypatch.setenv("RECLAIMSTUDY_CACHE", str(tmp_path / "cache"))
    valid, parv = valid_folder(tmp_path)
    derived = {"mode": "run", "disk_timing": {
        "model": "disksim", "drive": "d", "parameters_path": str(parv),
        "media": {"outer_blocks_per_track": 300, "capacity_sectors": 318_000}}}
    gem5 = gem5_binary(disksim={"key": "k", "version": "v", "timing": "t",
                                "valid_dir": str(valid)})
    searched = gem5_backend.with_derived_drive(gem5, derived)["disk_timing"]["search_path"]
    assert searched == str(derived_drive_dir(valid, parv, 300, 318_000))
    validated = gem5_backend.disk_timing_params(get_system("desktop-disksim-ibm18es-64"))
    params = {"mode": "run", "disk_timing": validated}
    assert gem5_backend.with_derived_drive(gem5, params) == params
    with pytest.raises(StudyError, match=r"a derived DiskSim drive \(d\) needs a gem5 built "
                                         r"with DiskSim: build gem5 with DiskSim linked in"):
        gem5_backend.with_derived_drive(gem5_binary(), derived)


# --- DiskSim standalone on the rewritten IBM 18ES (DISKSIM: a DiskSim checkout) ---

SOURCE = os.environ.get("DISKSIM")
needs_disksim = pytest.mark.skipif(
    not SOURCE, reason="DISKSIM is not set (a clone of github.com/westerndigitalcorporation/"
                       "DiskSim, or its STABLE/DiskSim_Linux_Generic_2.01.016 tree)")


def _serve(build, search: Path, requests: list[tuple[float, int, int]], work: Path,
           overrides: list[list[str]]) -> str | None:
    """DiskSim's report for reads (arrival ms, sector, sectors) on the profile's parameter
    file with `search` as its search path; None if DiskSim refused them."""
    trace = work / "reads.trace"
    trace.write_text("".join(f"{t:.6f} 0 {s} {n} 1\n" for t, s, n in requests))
    parameters = get_system(DERIVED).disk.timing.parameters_path
    flat = [value for triple in overrides for value in triple]
    done = subprocess.run([str(build.binary), str(parameters), str(work / "out.outv"), "ascii",
                           str(trace), "0", *flat], cwd=work, capture_output=True,
                          env={**os.environ, "LP_PATH": str(search)})
    return (work / "out.outv").read_text() if done.returncode == 0 else None


def _mean(report: str, what: str) -> float:
    return float(re.search(r"^Disk " + re.escape(what) + r" average:\s*([0-9.]+)", report,
                           re.M)[1])


@pytest.mark.source
@needs_disksim
def test_disksim_takes_the_rewritten_ibm_18es_with_the_2009_drives_capacity_and_media_rate(
        tmp_path):
    build = disksim_build.build_disksim(Path(SOURCE))
    timing = get_system(DERIVED).disk.timing
    folder = derived_drive_dir(build.validation_dir, timing.parameters_path,
                               timing.media.outer_blocks_per_track,
                               timing.media.capacity_sectors)
    sectors = int(re.search(r"Block count = (\d+)", (folder / "ibm18es.model").read_text())[1])
    print(f"rewritten IBM 18ES: {sectors} sectors "
          f"({(sectors - timing.media.capacity_sectors) / timing.media.capacity_sectors:+.4%} "
          f"against the 7K1000.C's)")
    overrides = timing.overrides
    # DiskSim holds exactly the sectors the rewrite counts: the last one reads, the next not
    assert _serve(build, folder, [(0.0, sectors - 1, 1)], tmp_path, overrides) is not None
    assert _serve(build, folder, [(0.0, sectors, 1)], tmp_path, overrides) is None
    # 128 KiB from the outer zone: the media moves it at 2,673 sectors a turn (track
    # switches included) against the validated drive's 390
    far = [(i * 100.0, i * 20_000, 256) for i in range(50)]
    derived = _mean(_serve(build, folder, far, tmp_path, overrides), "Transfer time")
    shipped = _mean(_serve(build, build.validation_dir, far, tmp_path, overrides),
                    "Transfer time")
    turn_ms = 60_000 / 7200
    print(f"128 KiB media transfer: {derived:.3f} ms rewritten, {shipped:.3f} ms validated")
    # (a read that crosses a track also waits the track switch's skew, a seventh of a turn)
    assert 256 / 2673 * turn_ms <= derived < 1.25 * 256 / 2673 * turn_ms
    assert 256 / 390 * turn_ms <= shipped < 1.25 * 256 / 390 * turn_ms
    assert shipped / derived == pytest.approx(2673 / 390, rel=0.05)
    # 4 KiB reads across the first 0.5 GB: the same data spans a sixteenth of the
    # cylinders it did, so it seeks less; across the whole drive the actuator's own times
    rng = random.Random(1)
    near = [(i * 100.0, rng.randrange(0, 1_000_000) // 8 * 8, 8) for i in range(400)]
    seeks = {name: _mean(_serve(build, where, near, tmp_path, overrides), "Seek time")
             for name, where in (("rewritten", folder), ("validated", build.validation_dir))}
    whole = [(i * 100.0, rng.randrange(0, sectors - 8) // 8 * 8, 8) for i in range(400)]
    across = _mean(_serve(build, folder, whole, tmp_path, overrides), "Seek time")
    print(f"4 KiB reads in the first 0.5 GB: mean seek {seeks['rewritten']:.3f} ms rewritten, "
          f"{seeks['validated']:.3f} ms validated; across the whole rewritten drive "
          f"{across:.3f} ms")
    assert seeks["rewritten"] < seeks["validated"] / 2
    assert 5.0 < across < 9.0  # the 18ES's seek curve over a third of the stroke, on average
