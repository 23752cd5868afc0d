"""gem5-patches/0009: the page walkers' accessed/dirty flag updates as conditional swaps,
behind a walker parameter that reclaim_fs.py turns on for systems of more than one core.
One-core runs simulate as before and keep their keys; multi-core runs are keyed by the
patch's version and refused on a gem5 without it, and on cores with nothing atomic
between them. The gem5 tests below need GEM5 (a gem5 with 0009) and skip, saying so,
without it."""

import re
from pathlib import Path

import pytest

from reclaimstudy.artefacts import gem5 as gem5_build
from reclaimstudy.backends.gem5 import backend as gem5_backend
from reclaimstudy.config.systems import get_system, system_names
from reclaimstudy.errors import StudyError
from tests.gem5_drives import reclaim_fs_functions

PATCH = "0009-x86-pte-atomic-flag-updates.patch"
DISKSIM = {"key": "d" * 16, "version": "v", "timing": "t"}
SIMPLESSD = {"key": "s" * 16, "version": "v", "timing": "t", "nvme": "n", "emmc": "e"}

# Each drive model's one-core checkpoint key as main computed it before 0009, for the
# gem5 of `binary(None)`, kernel "kernel", image "image", HZ 1000 (git e9e1620).
ONE_CORE_CHECKPOINTS = {
    "ci-tiny": "90282eae5b639997",
    "desktop-hdd-64": "b0ef2ef89bd7939a",
    "desktop-hdd-64-atomic-nocache": "b0ef2ef89bd7939a",
    "desktop-disksim-ibm18es-64": "456fc76c2eb5187d",
    "desktop-sata-ssd-64": "0489bd78f7c3e994",
    "desktop-nvme-ssd-64": "76aa02b87fa801c2",
    "mobile-emmc-samsung-pro-32gb-64": "e0aa86f9f58722c9",
    "desktop-zram-64": "a2a6d2081b236e45",
}


def binary(pte_atomic: str | None) -> gem5_backend.Gem5:
    """A gem5 of the current series with both drive simulators linked in, built with
    0009 (its version) or without it (None)."""
    return gem5_backend.Gem5(Path("/opt/gem5.fast"), "24.0.0.1", "0" * 64,
                             {"USE_X86_ISA": "True"}, gem5_backend.SERIES, disksim=DISKSIM,
                             simplessd=SIMPLESSD, pte_atomic=pte_atomic)


def checkpoint_key(gem5: gem5_backend.Gem5, name: str) -> str:
    system = get_system(name)
    return gem5_backend._checkpoint_key(gem5.key_for(system), "kernel", "image", 1000, system)


def test_the_patchs_marker_is_the_one_the_tool_keys_multi_core_runs_by():
    text = (gem5_build.GEM5_PATCHES / PATCH).read_text()
    assert re.findall(r'^\+RECLAIMSTUDY_PTE_ATOMIC = "([^"]+)"$', text, re.M) == \
        [gem5_backend.PTE_ATOMIC]
    assert [p.name for p in gem5_build.read_series().patches][-1] == PATCH
    # It changes nothing the series' name stands for (0001-0004's markers).
    assert "RECLAIMSTUDY_SERIES" not in text


def test_one_core_runs_keep_their_keys_with_or_without_0009():
    without, with_ = binary(None), binary(gem5_backend.PTE_ATOMIC)
    for name, key in ONE_CORE_CHECKPOINTS.items():
        assert (checkpoint_key(without, name), checkpoint_key(with_, name)) == (key, key), name
    for name in system_names():
        system = get_system(name)
        if system.cpu.cores == 1:
            assert with_.key_for(system) == without.key_for(system), name
            assert gem5_backend.script_key(system) in gem5_backend.SCRIPT_KEYS.values(), name


def test_multi_core_runs_are_keyed_by_0009s_version_and_their_core_count():
    two, four = get_system("desktop-hdd-64-2core"), get_system("desktop-hdd-64-4core")
    assert (two.cpu.cores, four.cpu.cores) == (2, 4)
    # The profiles are desktop-hdd-64 but for their cores.
    for system in (two, four):
        assert {**system.changed(cpu={"cores": 1}).identity(), "name": ""} == \
            {**get_system("desktop-hdd-64").identity(), "name": ""}
    gem5, later = binary(gem5_backend.PTE_ATOMIC), binary("pte-ad-smp-2")
    one = gem5.key_for(get_system("desktop-hdd-64"))
    assert gem5.key_for(two) == gem5.key_for(four) != one
    assert later.key_for(two) != gem5.key_for(two)
    keys = {checkpoint_key(gem5, n) for n in ("desktop-hdd-64", "desktop-hdd-64-2core",
                                               "desktop-hdd-64-4core")}
    assert len(keys) == 3 and ONE_CORE_CHECKPOINTS["desktop-hdd-64"] in keys


def test_a_change_to_the_scripts_multi_core_path_rekeys_multi_core_runs_alone(monkeypatch):
    names = ("desktop-hdd-64", "desktop-sata-ssd-64", "desktop-hdd-64-2core",
             "desktop-hdd-64-4core")
    gem5 = binary(gem5_backend.PTE_ATOMIC)
    before = {name: checkpoint_key(gem5, name) for name in names}
    monkeypatch.setitem(gem5_backend.SCRIPT_KEYS, "multi-core", "f" * 64)
    after = {name: checkpoint_key(gem5, name) for name in names}
    assert [after[n] == before[n] for n in names] == [True, True, False, False]


def test_a_multi_core_system_is_refused_on_a_gem5_without_0009():
    two = get_system("desktop-hdd-64-2core")
    with pytest.raises(StudyError, match=r"desktop-hdd-64-2core has 2 cores, which needs "
                                         r"gem5-patches/0009 .*RECLAIMSTUDY_PTE_ATOMIC = "
                                         r"'pte-ad-smp-1'.*GEM5=/opt/gem5.fast was built "
                                         r"without 0009: build gem5 again .* holds 0009"):
        gem5_backend.require_patches(binary(None), two)
    gem5_backend.require_patches(binary(gem5_backend.PTE_ATOMIC), two)
    # One core does without it.
    gem5_backend.require_patches(binary(None), get_system("desktop-hdd-64"))


def test_cores_with_no_cache_are_refused_unless_the_cpu_is_atomic():
    """With hierarchy none nothing holds a line, so no read-modify-write is atomic between
    timing cores, 0009 or not; the atomic CPU runs one core's instruction at a time."""
    gem5 = binary(gem5_backend.PTE_ATOMIC)
    nocache = get_system("desktop-hdd-64-atomic-nocache")
    timing = nocache.changed(cpu={"cores": 2, "model": "timing"})
    for model in ("timing", "o3"):
        with pytest.raises(StudyError, match=rf"has 2 {model} cores and no caches "
                                             r"\(\[caches\] hierarchy = 'none'\).*give it a "
                                             r"cache hierarchy"):
            gem5_backend.require_patches(gem5, timing.changed(cpu={"model": model}))
    gem5_backend.require_patches(gem5, nocache.changed(cpu={"cores": 2}))
    gem5_backend.require_patches(gem5, timing.changed(cpu={"cores": 1}))


def test_the_script_turns_atomic_flag_updates_on_for_more_than_one_core():
    walker_params = reclaim_fs_functions(("walker_params",), {})["walker_params"]
    assert walker_params({"cores": 1}) == {}
    assert walker_params({"cores": 2}) == walker_params({"cores": 4}) == \
        {"atomic_flag_updates": True}
    forced = {"atomic_flag_updates": True, "flag_cas_fail_period": 2}
    assert walker_params({"cores": 1, "walker": forced}) == forced


def test_the_binarys_0009_version_is_read_and_recorded(monkeypatch, tmp_path):
    import json
    import stat
    monkeypatch.setenv("RECLAIMSTUDY_CACHE", str(tmp_path / "cache"))
    for reported, expected in ((gem5_backend.PTE_ATOMIC, gem5_backend.PTE_ATOMIC),
                               (None, None)):
        identity = json.dumps({"version": "24.0.0.1", "options": {"USE_X86_ISA": "True"},
                               "pte_atomic": reported})
        folder = tmp_path / str(reported)
        folder.mkdir()
        path = folder / "gem5.fast"
        path.write_text(f"#!/bin/sh\necho 'RECLAIM-GEM5-IDENTITY {identity}'\n")
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
        monkeypatch.setenv("GEM5", str(path))
        gem5 = gem5_backend.find_gem5()
        assert gem5.pte_atomic == expected
        assert gem5.identity().get("pte_atomic") == expected
