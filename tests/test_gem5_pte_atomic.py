"""gem5-patches/0009: the page walkers' accessed/dirty flag updates as conditional swaps,
behind a walker parameter that reclaim_fs.py turns on for systems of more than one core.
One-core runs simulate as before and keep their keys; multi-core runs are keyed by the
patch's version and refused on a gem5 without it, and on cores with nothing atomic
between them. The gem5 tests below need GEM5 (a gem5 with 0009) and skip, saying so,
without it."""

import os
import re
from pathlib import Path

import pytest

from analysis.records import read_events
from reclaimstudy.artefacts import gem5 as gem5_build
from reclaimstudy.backends.gem5 import backend as gem5_backend
from reclaimstudy.backends.gem5.segments import CONSOLE
from reclaimstudy.campaigns import runs
from reclaimstudy.config.policies import get_policy
from reclaimstudy.config.systems import get_system, system_names
from reclaimstudy.config.workloads import get_workload
from reclaimstudy.errors import StudyError
from reclaimstudy.results.console import parse_console_file
from reclaimstudy.results.gem5_stats import select_values
from tests.gem5_drives import gem5_reason, reclaim_fs_functions

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


# On gem5 (GEM5: a gem5 built with 0009).

def reason_without_0009(profile: str) -> str | None:
    """Why GEM5 cannot run these tests on `profile` (None when it can)."""
    reason = gem5_reason(profile, BUILD)
    if reason is None and not gem5_backend.find_gem5().pte_atomic:
        reason = (f"GEM5={os.environ['GEM5']} was built without gem5-patches/0009, which "
                  f"these tests exercise ({BUILD})")
    return reason


def needs_0009(profile: str):
    reason = reason_without_0009(profile)
    return pytest.mark.skipif(reason is not None, reason=reason or "")


def reference_reason() -> str | None:
    """Why GEM5_WITHOUT_0009 cannot be the reference (None when it can): a gem5 of the same
    series without 0009, as the one-core runs were made before it."""
    value = os.environ.get("GEM5_WITHOUT_0009")
    if not value:
        return ("GEM5_WITHOUT_0009 is not set: this test compares GEM5 with a gem5 built "
                "from gem5-patches/ 0001-0008 (the build before 0009)")
    return None


BUILD = "./study gem5 --source GEM5_DIR, from a series that holds 0009"


def prepared_run(workload_name: str, profile: str, arguments: dict | None = None):
    """`workload_name` on `profile` prepared for GEM5, and its run's parameters."""
    workload = get_workload(workload_name)
    spec = runs.RunSpec(f"pte-atomic-{profile}", get_system(profile), get_policy("baseline"),
                        workload, workload.arguments(arguments or {}), 0, "gem5")
    prepared = gem5_backend.Gem5Backend().prepare(spec)
    return prepared, gem5_backend.run_params(spec, prepared, runs.job_text(spec, "pte-atomic"),
                                             3600)


def simulated(gem5: gem5_backend.Gem5, params: dict, out: Path) -> tuple[list[dict], Path]:
    """Run gem5 on `params` into `out`; the guest's events and the stats file."""
    result = gem5_backend.simulate(gem5, params, out, timeout_s=3600)
    assert result["status"] == "exit", result
    print(f"{out.name}: {result['host']['wall_seconds']:.0f} host s, "
          f"{result['sim_seconds']:.3f} simulated s")
    return parse_console_file(out / CONSOLE).events, out / "stats.txt"


def core_swaps(stats: Path) -> dict[str, tuple[float, float]]:
    """Per core, 0009's swaps sent and walks restarted (both walkers, every block)."""
    found: dict[str, list[float]] = {}
    for block in select_values(stats, [r"\.walker\.flagCas(Failures)?$"]):
        for key, value in block.items():
            core = re.search(r"cores?(\d+)", key)
            entry = found.setdefault(core.group(1) if core else "?", [0.0, 0.0])
            entry[key.endswith("Failures")] += value
    return {core: (sent, failed) for core, (sent, failed) in found.items()}


def flag_counts(stats: Path) -> dict[str, float]:
    """0009's walker statistics, summed over the cores (core_swaps)."""
    per_core = core_swaps(stats).values()
    return {".flagCas": sum(sent for sent, _ in per_core),
            ".flagCasFailures": sum(failed for _, failed in per_core)}


def assert_flags_set(events: list[dict]) -> dict:
    """pte-flags' record as on a machine that sets both flags (tests/test_gem5.py)."""
    [flags] = [e for e in events if e.get("kind") == "flags"]
    assert flags["referenced_kib_cleared"] == 0 and flags["lazyfree_kib_freed"] > 0, flags
    assert flags["referenced_kib_used_again"] == flags["pages"] * 4, flags
    assert flags["lazyfree_kib_rewritten"] == 0, flags
    assert flags["faults_reading_again"] == flags["faults_rewriting"] == 0, flags
    return flags


def without_host_lines(stats: Path) -> list[str]:
    """stats.txt but for gem5's host figures (time, rates, memory), which differ between
    two runs of one simulation."""
    return [line for line in stats.read_text().splitlines()
            if not line.split(" ", 1)[0].rsplit(".", 1)[-1].startswith("host")]


@pytest.mark.gem5
@needs_0009("desktop-hdd-64")
@pytest.mark.skipif(reference_reason() is not None, reason=reference_reason() or "")
def test_one_core_simulates_as_without_0009(tmp_path, monkeypatch):
    """Off (one core), 0009 changes nothing: the same run on GEM5 and on the build before
    it gives the same statistics, line for line but gem5's host figures, and the same
    guest console; both binaries give the run the same key."""
    system = get_system("desktop-hdd-64")
    ours = gem5_backend.find_gem5()
    monkeypatch.setenv("GEM5", os.environ["GEM5_WITHOUT_0009"])
    before = gem5_backend.find_gem5()
    monkeypatch.setenv("GEM5", str(ours.path))
    assert (ours.pte_atomic, before.pte_atomic) == (gem5_backend.PTE_ATOMIC, None)
    assert ours.key_for(system) == before.key_for(system)
    _, params = prepared_run("pte-flags", "desktop-hdd-64")
    events, stats = simulated(ours, params, tmp_path / "with-0009")
    assert_flags_set(events)
    _, reference = simulated(before, params, tmp_path / "without-0009")
    assert "flagCas" not in stats.read_text()
    assert without_host_lines(stats) == without_host_lines(reference)
    assert (tmp_path / "with-0009" / CONSOLE).read_bytes() == \
        (tmp_path / "without-0009" / CONSOLE).read_bytes()


@pytest.mark.gem5
@pytest.mark.parametrize("profile", ["ci-tiny", "desktop-hdd-64"])
def test_every_second_swap_failing_restarts_walks_and_the_flags_still_come_out_right(
        tmp_path, profile):
    """flag_cas_fail_period = 2 on one core: every second swap expects a value the entry
    does not hold, so memory (ci-tiny: no caches, atomic CPU) or the walker's MMU cache
    (desktop-hdd-64: timing CPU) refuses it and the walk starts again. Nothing else
    changes an entry between a walk's read and its swap on one core, so the restarts are
    the forced failures, about half of the swaps; and pte-flags still finds both flags
    set by the machine."""
    reason = reason_without_0009(profile)
    if reason:
        pytest.skip(reason)
    _, params = prepared_run("pte-flags", profile)
    params["walker"] = {"atomic_flag_updates": True, "flag_cas_fail_period": 2}
    events, stats = simulated(gem5_backend.find_gem5(), params, tmp_path / profile)
    flags = assert_flags_set(events)
    counts = flag_counts(stats)
    print(profile, flags, counts)
    assert counts[".flagCas"] > 100, counts
    assert 0.45 <= counts[".flagCasFailures"] / counts[".flagCas"] <= 0.55, counts


RACE_ROUNDS = 200


@pytest.mark.gem5
@needs_0009("desktop-hdd-64-2core")
def test_two_cores_racing_on_page_table_entries_break_nothing(tmp_path):
    """pte-race on two timing cores with walk caches, 0009 on (reclaim_fs.py turns it on
    for more than one core): no frame is mapped by both regions, Linux reports no broken
    mapping and no bad page. Every round, core 1's walker set by conditional swap the
    flags core 0 had just cleared (at least one swap a page a round), so the two cores
    met on the entries each round. Whether a swap ever found its entry changed between
    the walk's read and the swap (a window of a few cycles) is printed, not asserted: in
    200 rounds none did (25,606 swaps), and the restart that follows one is tested with
    forced failures above."""
    workload = get_workload("pte-race")
    spec = runs.RunSpec("pte-race", get_system("desktop-hdd-64-2core"), get_policy("baseline"),
                        workload, workload.arguments({"iterations": RACE_ROUNDS}), 0, "gem5")
    record = runs.execute(spec, gem5_backend.Gem5Backend(), tmp_path, timeout_s=4 * 3600)
    assert record["status"] == "ok", record["reason"]
    run_dir = tmp_path / "pte-race" / record["run_id"]
    [race] = [e for e in read_events(run_dir) if e.get("kind") == "race"]
    swaps = core_swaps(run_dir / "stats.txt")
    print(race, swaps, record.get("backend_info", {}).get("wall_seconds"))
    assert race["iterations"] == RACE_ROUNDS, race
    assert race["foreign_in_r"] == race["foreign_in_r2"] == 0, race
    assert race["kernel_bad_lines"] == 0 and race["tainted_bad_page"] == 0, race
    assert set(swaps) == {"0", "1"}, swaps
    assert swaps["1"][0] >= RACE_ROUNDS * race["pages"], swaps


CLOCK_LINES = """echo "CLOCK: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
dmesg | grep -i -E "tsc|clocksource" | sed 's/^/CLOCK: /'
"""


@pytest.mark.gem5
@needs_0009("desktop-hdd-64-2core")
def test_a_multi_core_guest_keeps_time_with_the_tsc(tmp_path):
    """On more than one gem5 core the guest keeps time with the TSC (tsc-early or tsc;
    gem5_kernel_args' tsc=reliable): without it 6.1 marked the TSC unstable at boot
    ("TSCs unsynchronized", gem5's CPU being neither Intel nor constant_tsc) and kept
    time with refined-jiffies, so every timing the guest took was a whole number of
    milliseconds. The smoke job's phase marks are then off the millisecond grid."""
    workload = get_workload("smoke")
    spec = runs.RunSpec("clock", get_system("desktop-hdd-64-2core"), get_policy("baseline"),
                        workload, workload.arguments({"read_mib": 1, "anon_mib": 1}), 0, "gem5",
                        job_extra=CLOCK_LINES)
    record = runs.execute(spec, gem5_backend.Gem5Backend(), tmp_path, timeout_s=4 * 3600)
    assert record["status"] == "ok", record["reason"]
    run_dir = tmp_path / "clock" / record["run_id"]
    lines = [line.split("CLOCK: ", 1)[1] for line in (run_dir / "console.log").read_text().splitlines()
             if "CLOCK: " in line]
    print("\n".join(lines))
    assert lines[0].strip() in ("tsc-early", "tsc"), lines
    assert not [line for line in lines if "unstable" in line.lower()], lines
    marks = [e["t"] for e in read_events(run_dir) if e.get("event") in ("phase", "phases_done")]
    off_grid = [b - a for a, b in zip(marks, marks[1:])
                if abs((b - a) * 1000 - round((b - a) * 1000)) > 0.01]
    assert off_grid, f"every phase took a whole number of milliseconds: {marks}"
