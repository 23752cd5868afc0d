"""`./study gem5 --source DIR`: gem5-patches/ against a gem5 checkout, the version
check, the cache key and the refusal of an unpatched gem5 for a modelled disk."""

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from reclaimstudy.artefacts import gem5 as gem5_build
from reclaimstudy.backends.gem5 import backend as gem5_backend
from reclaimstudy.config.systems import get_system
from reclaimstudy.errors import StudyError
from reclaimstudy.hashing import file_sha256

SOURCE = os.environ.get("GEM5_SOURCE")
needs_source = pytest.mark.skipif(
    not SOURCE, reason="GEM5_SOURCE is not set (a gem5 v24.0.0.1 source checkout)")


def fake_checkout(root: Path, version: str = "24.0.0.1") -> Path:
    (root / "src" / "base").mkdir(parents=True)
    (root / "src" / "base" / "version.cc").write_text(
        f'namespace gem5 {{\nconst char *gem5Version = "{version}";\n}}\n')
    (root / "SConstruct").write_text("# gem5\n")
    (root / "build" / "X86").mkdir(parents=True)
    (root / "build" / "X86" / "gem5.opt").write_text("built")
    return root


def test_the_series_names_its_gem5_release_and_its_patches_exist():
    series = gem5_build.read_series()
    assert series.version == "24.0.0.1"
    assert series.patches and all(p.is_file() for p in series.patches)


def test_another_gem5_version_is_refused_naming_both(tmp_path):
    source = fake_checkout(tmp_path / "gem5", "23.1.0.0")
    with pytest.raises(StudyError, match=r"is gem5 23.1.0.0, but gem5-patches/ is made against "
                                         r"gem5 24.0.0.1: check out .*v24.0.0.1"):
        gem5_build.build_inputs(source, "opt")


def test_not_a_gem5_tree_and_an_unknown_variant_are_clear_errors(tmp_path):
    with pytest.raises(StudyError, match="not a gem5 source checkout"):
        gem5_build.source_version(tmp_path)
    with pytest.raises(StudyError, match="unknown gem5 variant 'debug': choose one of opt, fast"):
        gem5_build.build_inputs(fake_checkout(tmp_path / "gem5"), "debug")


def test_the_cache_key_follows_the_source_content_not_its_build_outputs(tmp_path):
    source = fake_checkout(tmp_path / "gem5")
    first = gem5_build.build_inputs(source, "opt")
    (source / "build" / "X86" / "gem5.opt").write_text("rebuilt")
    assert gem5_build.build_inputs(source, "opt") == first
    (source / "SConstruct").write_text("# gem5, edited\n")
    assert gem5_build.build_inputs(source, "opt")["source_sha256"] != first["source_sha256"]
    assert gem5_build.build_inputs(source, "fast")["variant"] == "fast"


def test_the_commit_is_read_from_git_files(tmp_path):
    git = tmp_path / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/stable\n")
    (git / "packed-refs").write_text("# pack-refs\n" + "ab" * 20 + " refs/heads/stable\n")
    assert gem5_build.source_commit(tmp_path) == "ab" * 20
    (git / "refs" / "heads" / "stable").write_text("cd" * 20 + "\n")
    assert gem5_build.source_commit(tmp_path) == "cd" * 20
    assert gem5_build.source_commit(tmp_path / "nowhere") is None


def test_a_finished_build_is_reused_without_building(tmp_path, monkeypatch):
    monkeypatch.setenv("RECLAIMSTUDY_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(gem5_build, "_build", lambda *a: pytest.fail("rebuilt a cached build"))
    source = fake_checkout(tmp_path / "gem5")
    inputs = gem5_build.build_inputs(source, "opt")
    work = tmp_path / "cache" / "gem5" / gem5_build.json_sha256(inputs)[:16]
    work.mkdir(parents=True)
    (work / "manifest.json").write_text('{"variant": "opt"}')
    build = gem5_build.build_gem5(source)
    assert build.binary == work / "source" / "build" / "X86" / "gem5.opt"


def test_a_new_series_starts_from_the_newest_build_of_the_same_source_and_variant(tmp_path):
    inputs = {"gem5_version": "24.0.0.1", "source_sha256": "s1", "variant": "fast", "recipe": 1,
              "patches": [{"name": "0003-new.patch", "sha256": "p3"}]}

    def finished(key, binary=True, age_s=0, **changed):
        work = tmp_path / key
        (work / "source" / "build" / "X86").mkdir(parents=True)
        if binary:
            (work / "source" / "build" / "X86" / f"gem5.{changed.get('variant', 'fast')}").touch()
        (work / "manifest.json").write_text(json.dumps({**inputs, "patches": [], **changed}))
        stamp = time.time() - age_s
        os.utime(work / "manifest.json", (stamp, stamp))

    assert gem5_build.earlier_build(tmp_path, inputs) is None
    finished("other-source", source_sha256="s2")
    finished("other-variant", variant="opt")
    finished("other-recipe", recipe=0)
    finished("no-binary", binary=False)
    assert gem5_build.earlier_build(tmp_path, inputs) is None
    finished("old", age_s=3600)
    finished("new", age_s=60)
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "manifest.json").write_text("{half")
    assert gem5_build.earlier_build(tmp_path, inputs) == tmp_path / "new"


# The patch files the series' name stands for. A run's identity knows gem5-patches/ only
# by that name (RECLAIMSTUDY_SERIES, built into the binary: Gem5.simulator_key), so a
# patch changed in what it simulates without a new marker would give new numbers under
# the old run ids. Changing a patch: bump its marker (in the patch and in gem5_backend)
# if the simulation changes, and put the new hashes here under the name.
PATCHES_OF_SERIES = {
    "disk-timing-2 sti-shadow-1 pte-ad-1 ckpt-state-2": {
        "0001-ide-disk-request-level-timing.patch":
            "963f21aad035c5396c0a9d9a6d4ae9a893a05ed0cce57ee3bf0b51b5b95089fd",
        "0002-x86-sti-interrupt-shadow.patch":
            "edd5faa2d75daa107010950ff166fcc50ed63374e6827df4554688a0cd8d99bb",
        "0003-x86-pte-accessed-dirty-flags.patch":
            "bf85844b8b0561ca2d2d507b9c0bd4369635e8c4539359dc21cb22ed81db6232",
        "0004-checkpoint-disk-timing-and-tlb-dirty.patch":
            "e7918fa249fcbdf672984c2d85124e837dcf21525dc8b493472caf0eda5b51e5",
        # 0005 adds DiskSimTiming, built only with DiskSim linked in; for the other
        # models it only tells them when an IDE command begins and ends (nothing they
        # use). A DiskSim drive's runs are keyed by its own marker and the DiskSim build
        # (DiskSimTiming.RECLAIMSTUDY_DISKSIM_TIMING, Gem5.key_for).
        "0005-disksim-timing.patch":
            "cb6c9782085f58972d48062234e37b2bb0164cade5343d5bd5cda093ecf69c01",
        # 0006 adds SimpleSSDTiming, built only with SimpleSSD linked in; it changes
        # nothing the other models simulate. A SimpleSSD drive's runs are keyed by its own
        # marker and the SimpleSSD build (RECLAIMSTUDY_SIMPLESSD_TIMING, Gem5.key_for).
        "0006-simplessd-timing.patch":
            "857bc0dab2fda8c6e5495c962d282632e22727114c1d1dce6643682125307df7",
        # 0007 adds SimpleSSDNVMe, built only with SimpleSSD linked in; its change to
        # 0006's engine adds a front end of the host's own and leaves the SATA drive's
        # path as it was. An NVMe drive's runs are keyed by its own marker beside
        # 0006's and the SimpleSSD build (RECLAIMSTUDY_SIMPLESSD_NVME, Gem5.key_for).
        "0007-simplessd-nvme.patch":
            "ba746ee8a32f482de00b791eee765029619833787db2bb352c9e48ca9f44ee73",
        # 0008 lets 0006's drive stand behind an eMMC bus (link = 'emmc') and leaves the
        # SATA drive's path as it was. An eMMC drive's runs are keyed by its own marker
        # beside 0006's and the SimpleSSD build (RECLAIMSTUDY_SIMPLESSD_EMMC, key_for).
        "0008-simplessd-emmc-link.patch":
            "8595ab4d6dd6dd3d12c8be4851268dbddde39a03744f984fd820c4d81f3544cc",
        # 0009 makes the page walkers' accessed/dirty flag updates atomic behind a
        # walker parameter, off by default: one core simulates as before (reclaim_fs.py
        # turns it on for more than one). A multi-core system's runs are keyed by its own
        # marker (X86TLB.RECLAIMSTUDY_PTE_ATOMIC, Gem5.key_for).
        "0009-x86-pte-atomic-flag-updates.patch":
            "51cd8a520c8290627229a9ad302fda94119b506de0d213bfc261d3e07d86144a",
    },
}


def test_the_series_name_the_runs_are_keyed_by_stands_for_these_patch_files():
    files = {p.name: file_sha256(p) for p in gem5_build.read_series().patches}
    assert PATCHES_OF_SERIES.get(gem5_backend.SERIES) == files, (
        "gem5-patches/ changed under the series name " + repr(gem5_backend.SERIES) + ": if "
        "the simulation changes, bump the patch's marker (its RECLAIMSTUDY_SERIES line and "
        "gem5_backend), so runs get a new gem5 key; then pin the files here")


def built(series: str | None, path: str = "/opt/gem5.opt") -> gem5_backend.Gem5:
    """A gem5 binary as find_gem5 reports it, built with `series` (None: stock)."""
    return gem5_backend.Gem5(Path(path), "24.0.0.1", "0" * 64, {}, series)


def test_a_modelled_disk_refuses_a_stock_gem5_saying_how_to_build_one():
    stock, patched = built(None), built(gem5_backend.SERIES)
    with pytest.raises(StudyError, match=r"desktop-hdd-128 models its disk per request .* "
                                         r"stock gem5: build one with `./study gem5 --source DIR`"):
        gem5_backend.require_patches(stock, get_system("desktop-hdd-128"))
    gem5_backend.require_patches(patched, get_system("desktop-hdd-128"))


def test_every_run_refuses_a_gem5_without_the_interrupt_shadow():
    """Even on gem5's own disk delay: the lost wakeup is the CPU's, not the disk's."""
    stock, disk_only = built(None), built("disk-timing-1", "/opt/gem5.fast")
    with pytest.raises(StudyError, match=r"/opt/gem5.opt is a stock gem5, without "
                                         r"gem5-patches/0002 \(sti-shadow-1\).*STI and HLT"):
        gem5_backend.require_patches(stock, get_system("ci-tiny"))
    with pytest.raises(StudyError, match=r"built with series 'disk-timing-1', without .*"
                                         r"./study gem5 --source DIR"):
        gem5_backend.require_patches(disk_only, get_system("desktop-hdd-128"))


def test_every_run_refuses_a_gem5_that_leaves_the_accessed_flag_clear():
    """Reclaim ages pages by the flag; without 0003 a used page looks unused."""
    before = built("disk-timing-1 sti-shadow-1")
    with pytest.raises(StudyError, match=r"series 'disk-timing-1 sti-shadow-1', without "
                                         r"gem5-patches/0003 \(pte-ad-1\).*accessed flag"):
        gem5_backend.require_patches(before, get_system("ci-tiny"))


def test_every_run_refuses_a_gem5_whose_restores_reset_the_drive():
    """Every segment boundary is a restore; without 0004 each one empties the drive."""
    before = built("disk-timing-1 sti-shadow-1 pte-ad-1")
    with pytest.raises(StudyError, match=r"without gem5-patches/0004 \(ckpt-state-2\).*"
                                         r"write cache and queue.*./study gem5 --source DIR"):
        gem5_backend.require_patches(before, get_system("desktop-hdd-64"))
    gem5_backend.require_patches(built(gem5_backend.SERIES), get_system("desktop-hdd-64"))


def test_every_run_refuses_a_gem5_whose_drives_do_not_say_if_they_rotate():
    """0001's first version left IDENTIFY word 217 at 0: the guest saw flash as a
    rotating disk. The series' name is all a run's identity knows of the patches, so a
    binary built before the fix keeps its own gem5 key and is refused here."""
    before = built("disk-timing-1 sti-shadow-1 pte-ad-1 ckpt-state-2")
    for system in ("desktop-ssd-64", "desktop-hdd-64", "ci-tiny"):
        with pytest.raises(StudyError, match=r"without gem5-patches/0001 \(disk-timing-2\).*"
                                             r"word 217.*flash too, as rotating"):
            gem5_backend.require_patches(before, get_system(system))
    assert built(gem5_backend.SERIES).simulator_key != before.simulator_key


@pytest.mark.source
@needs_source
def test_the_series_applies_to_the_given_gem5_checkout(tmp_path):
    source = Path(SOURCE)
    series = gem5_build.read_series()
    assert gem5_build.source_version(source) == series.version
    tree = tmp_path / "tree"
    # Only the files the series touches (and gem5 has: a later patch may edit a new one).
    for patch in series.patches:
        for line in patch.read_text().splitlines():
            if line.startswith("--- a/") and (source / line[6:]).is_file():
                target = tree / line[6:]
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source / line[6:], target)
    gem5_build.apply_series(tree, series)
    assert "HddTiming" in (tree / "src/dev/storage/DiskTiming.py").read_text()
    assert "descriptorDelay" in (tree / "src/dev/storage/ide_disk.cc").read_text()
    assert "beginInterruptShadow" in (tree / "src/arch/x86/isa.cc").read_text()
