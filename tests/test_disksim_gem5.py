"""DiskSim as gem5's rotating drive: gem5-patches/0005's DiskSimTiming behind the IDE disk,
our parameter files (configs/disksim/), profiles with [disk.timing] model = "disksim", and
`./study gem5 --disksim DIR`.

On the host alone: the profiles, the keys and the refusals. With DISKSIM (a DiskSim
checkout): our parameter file is the drive DiskSim validated, to the last digit. With
GEM5 (a gem5 built with --disksim; marked gem5): the drive inside gem5 answers every
request exactly as DiskSim standalone does (what the IDE layer adds is measured beside
it), and a repetition's seed moves the drive while the same seed repeats it. The
kill-and-resume test with the DiskSim profile is tests/test_gem5.py's."""

import ast
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from analysis.records import read_events
from reclaimstudy.artefacts import disksim as disksim_build, disksim_validation, gem5 as gem5_build
from reclaimstudy.backends.gem5 import backend as gem5_backend
from reclaimstudy.config.systems import DisksimTiming, get_system
from reclaimstudy.errors import StudyError
from reclaimstudy.hashing import file_sha256
from reclaimstudy.results.gem5_stats import select_values
from tests.gem5_drives import (drive_stats, gem5_binary, needs_gem5_for, patch_file,
                               prepared_disk_calib, system_toml)

PROFILE = "desktop-disksim-ibm18es-64"
HARNESS = Path(__file__).parent / "disksim" / "replay.cc"

# --- the profiles, keys and refusals (host only) ---


def test_the_disksim_profile_is_the_validated_drive_on_one_spindle():
    system = get_system(PROFILE)
    timing = system.disk.timing
    assert isinstance(timing, DisksimTiming) and timing.validated and not timing.overrides
    assert "IBM Ultrastar 18ES DNES-309170W" in timing.drive and "validated" in timing.drive
    assert timing.parameters_path.is_file() and system.disk.swap == "partition"
    assert (system.disk.rotation_rate, system.disk.rotational) == (7200, True)
    assert not system.disk.reports_write_cache
    # The drive's own files are DiskSim's: our file sources them, never holds them.
    text = timing.parameters_path.read_text()
    assert "source ibm18es.diskspecs" in text and "Rotation speed" not in text
    assert "Time stamp file name" not in text  # DiskSim would write `stamps` into the cwd


def test_the_derived_drive_says_so_and_where_its_values_come_from():
    timing = get_system("desktop-disksim-ibm18es-sata-64").disk.timing
    assert not timing.validated and "derived, not validated" in timing.drive
    assert timing.parameters == get_system(PROFILE).disk.timing.parameters
    assert {o[1] for o in timing.overrides} == {
        "Bulk sector transfer time", "Number of buffer segments", "Segment size (in blks)",
        "Maximum read-ahead (blks)"}
    assert "7K1000.C" in timing.sources and "assumed" in timing.sources


def _disksim_toml(**timing) -> str:
    return system_toml({"profile": "hdd", "swap_mib": 256},
                       {"model": "disksim", "drive": "IBM 18ES: validated", "validated": True,
                        "parameters": "ibm18es-ide.parv", "rpm": 7200, **timing})


@pytest.mark.parametrize("timing, message", [
    ({"parameters": "nowhere.parv"}, r"parameters = 'nowhere.parv': not a file in .*disksim"),
    ({"overrides": [["disk0", "Bulk sector transfer time", "0.01"]]},
     r"a validated drive is DiskSim's model as shipped: no overrides"),
    ({"validated": False, "sources": "s", "overrides": [["disk0", "x"]]},
     r"\['disk0', 'x'\] is not \[component, parameter, value\]"),
    ({"validated": False, "sources": "s"}, r"says 'derived, not validated' in its name"),
    ({"drive": "IBM 18ES, derived, not validated"}, r"and only such a drive does"),
    ({"validated": False, "drive": "a 2009 drive, derived, not validated"},
     r"a derived drive says where its values come from"),
])
def test_a_disksim_drive_says_what_it_is_or_is_refused(tmp_path, timing, message):
    (tmp_path / "bad.toml").write_text(_disksim_toml(**timing))
    with pytest.raises(StudyError, match=message):
        get_system("bad", tmp_path)


def test_the_parameter_file_is_part_of_the_drive_by_its_content(tmp_path):
    system = get_system(PROFILE)
    timing = system.identity()["disk"]["timing"]
    assert timing["parameters_sha256"] == file_sha256(
        system.disk.timing.parameters_path)
    params = gem5_backend.disk_timing_params(system)
    assert params["parameters_path"] == str(system.disk.timing.parameters_path)


def binary(disksim: dict | None = None) -> gem5_backend.Gem5:
    return gem5_binary(disksim=disksim)


DISKSIM = {"key": "3d67a7a79acdb03a", "version": "2.01.016", "timing": "disksim-timing-1",
           "valid_dir": "/cache/disksim/3d67a7a79acdb03a/source/valid"}


def test_a_disksim_profile_refuses_a_gem5_without_disksim_naming_the_fix():
    with pytest.raises(StudyError, match=r"desktop-disksim-ibm18es-64 times its disk with "
                                         r"DiskSim .* built without DiskSim: build gem5 with "
                                         r"DiskSim linked in: `./study gem5 --source GEM5_DIR "
                                         r"--disksim DISKSIM_DIR`"):
        gem5_backend.require_patches(binary(), get_system(PROFILE))
    gem5_backend.require_patches(binary(DISKSIM), get_system(PROFILE))


def test_disksim_runs_are_keyed_by_the_disksim_in_the_binary_and_no_other_run_is():
    hdd, disksim = get_system("desktop-hdd-64"), get_system(PROFILE)
    plain, linked = binary(), binary(DISKSIM)
    # An hdd run is the same run whether or not DiskSim is linked in.
    assert plain.key_for(hdd) == linked.key_for(hdd) == linked.simulator_key
    other_build = binary({**DISKSIM, "key": "007f050be99cd43a"})
    other_model = binary({**DISKSIM, "timing": "disksim-timing-2"})
    moved = binary({**DISKSIM, "valid_dir": "/elsewhere/valid"})
    keys = {b.key_for(disksim) for b in (linked, other_build, other_model)}
    assert len(keys) == 3 and linked.simulator_key not in keys
    assert moved.key_for(disksim) == linked.key_for(disksim)  # where it lies is not what it is
    assert linked.identity()["disksim"] == {k: DISKSIM[k] for k in ("key", "version", "timing")}
    assert "disksim" not in plain.identity()


def fake_disksim_build(directory: Path, key: str = "feedfacefeedface"):
    (directory).mkdir(parents=True)
    (directory / "manifest.json").write_text(json.dumps({
        "key": key, "disksim_version": "2.01.016", "source_commit": "c" * 40,
        "patches": [{"name": "0001-request-records-ring.patch", "sha256": "s"}]}))
    return disksim_build.DisksimBuild(directory)


def test_the_gem5_build_key_holds_disksim_only_when_it_is_linked_in(tmp_path):
    from tests.test_gem5_build import fake_checkout
    source = fake_checkout(tmp_path / "gem5")
    plain = gem5_build.build_inputs(source, "fast")
    assert "disksim" not in plain  # a build without DiskSim is keyed as it always was
    linked = gem5_build.build_inputs(source, "fast", fake_disksim_build(tmp_path / "d1"))
    assert linked["disksim"]["key"] == "feedfacefeedface"
    other = gem5_build.build_inputs(source, "fast", fake_disksim_build(tmp_path / "d2", "beef"))
    keys = {gem5_build.json_sha256(i) for i in (plain, linked, other)}
    assert len(keys) == 3
    module = gem5_build.disksim_module(fake_disksim_build(tmp_path / "d3"))
    namespace: dict = {}
    exec(module, namespace)  # what 0005's SConscript and identify.py read
    info = namespace["RECLAIMSTUDY_DISKSIM"]
    assert info["key"] == "feedfacefeedface" and info["valid_dir"].endswith("source/valid")
    assert [Path(p).name for p in info["libraries"]] == [
        "libdisksim.a", "libdiskmodel.a", "libparam.a", "libddbg.a"]


def _reclaim_fs_function(name: str):
    tree = ast.parse(gem5_backend.CONFIG_SCRIPT.read_text())
    function = next(f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == name)
    namespace: dict = {}
    exec(compile(ast.Module([function], []), str(gem5_backend.CONFIG_SCRIPT), "exec"), namespace)
    return namespace[name]


def test_a_drives_seed_is_a_time_offset_under_a_second_the_same_on_every_host():
    offset = _reclaim_fs_function("disksim_time_offset_ps")
    offsets = [offset(seed) for seed in range(40)]
    assert offsets == [offset(seed) for seed in range(40)]
    assert len(set(offsets)) == 40 and all(0 <= o < 10**12 for o in offsets)
    # splitmix64: seed 0's first output (a published constant) mod 10^12.
    assert offset(0) == 0xE220A8397B1DCDAF % 10**12


# --- DiskSim standalone (DISKSIM: a DiskSim checkout) ---

SOURCE = os.environ.get("DISKSIM")
needs_disksim = pytest.mark.skipif(
    not SOURCE, reason="DISKSIM is not set (a clone of github.com/westerndigitalcorporation/"
                       "DiskSim, or its STABLE/DiskSim_Linux_Generic_2.01.016 tree)")


@pytest.mark.source
@needs_disksim
def test_our_parameter_file_is_the_drive_disksim_validated_to_the_last_digit():
    """The IBM 18ES's validation trace through configs/disksim/ibm18es-ide.parv (our host
    side around DiskSim's own drive files) gives the access times DiskSim's own
    valid/ibm18es.parv gives, so the RMS against the real drive is runvalid's."""
    build = disksim_build.build_disksim(Path(SOURCE))
    ours = get_system(PROFILE).disk.timing.parameters_path
    with tempfile.TemporaryDirectory(prefix="disksim-ours-") as scratch:
        work = Path(scratch)
        shutil.copytree(build.validation_dir, work / "valid")
        for parameters, output in ((str(ours), "ours.outv"), ("ibm18es.parv", "shipped.outv")):
            subprocess.run([build.binary, parameters, output, "validate", "ibm18es.trace", "0"],
                           cwd=work / "valid", check=True, capture_output=True,
                           env={**os.environ, "LP_PATH": str(work / "valid")})
        texts = {name: (work / "valid" / name).read_text() for name in
                 ("ours.outv", "shipped.outv")}
    where = "outv"
    simulated = {name: disksim_validation.distribution(text, disksim_validation.SIMULATED, where)
                 for name, text in texts.items()}
    measured = disksim_validation.distribution(texts["ours.outv"], disksim_validation.MEASURED,
                                               where)
    assert simulated["ours.outv"] == simulated["shipped.outv"]
    rms = disksim_validation.rms_distance(simulated["ours.outv"], measured)
    print(f"IBM 18ES through configs/disksim/ibm18es-ide.parv: RMS {rms:.6f} ms")
    assert rms == pytest.approx(0.136072, abs=5e-7)


@pytest.mark.source
@needs_disksim
def test_the_patchs_engine_restores_a_drive_that_answers_as_the_one_that_served(tmp_path):
    """0005's DiskSim engine, built from the patch outside gem5: drives restored from the
    log at 48 checkpoints (between requests and inside one) answer the next 300 requests
    at the times the drive that served them did, with DiskSim's totals counted alike;
    a log replayed under another seed's offset still reaches DiskSim in time order."""
    build = disksim_build.build_disksim(Path(SOURCE))
    tree = tmp_path / "src"
    for name in ("disksim_engine.hh", "disksim_engine.cc"):
        target = tree / "dev" / "storage" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(patch_file("0005-disksim-timing.patch", f"src/dev/storage/{name}"))
    program = tmp_path / "engine_check"
    subprocess.run(["g++", "-std=c++17", "-O2", "-Wall", "-Werror", f"-I{tree}",
                    *[f"-isystem{d}" for d in build.internal_include_dirs],
                    str(tree / "dev" / "storage" / "disksim_engine.cc"),
                    str(HARNESS.parent / "engine_check.cc"), *map(str, build.libraries), "-lm",
                    "-o", str(program)], check=True)
    printed = subprocess.run(
        [str(program), str(get_system(PROFILE).disk.timing.parameters_path),
         str(build.validation_dir), "3000"], capture_output=True, text=True, check=True).stdout
    print(printed)
    assert "restores 48, answers 13428, differing 0, totals differing 0" in printed
    assert "shifted: ok" in printed


# --- inside gem5 (GEM5: a gem5 built with --disksim) ---

needs_disksim_gem5 = needs_gem5_for(
    PROFILE, "./study gem5 --source GEM5_DIR --disksim DISKSIM_DIR")
DRIVE = r"ide\.disks\d*\.timing\.(serviceTicks|rotationTicks|seekTicks|transferTicks|" \
        r"commandTicks|ideTicks|reads|writes|fullReadHits|readMisses)$"


def _prepared():
    return prepared_disk_calib(PROFILE, "disksim")


def _simulate(prepared, params, out: Path) -> dict:
    result = gem5_backend.simulate(prepared.parts["gem5"], params, out, timeout_s=3600)
    assert result["status"] == "exit", result
    return result


def _drive_stats(out: Path) -> dict[str, float]:
    return drive_stats(out, DRIVE)


def _harness(gem5: gem5_backend.Gem5, work: Path) -> Path:
    """tests/disksim/replay.cc, built against the DiskSim linked into this gem5."""
    info = gem5.disksim
    build = disksim_build.DisksimBuild(Path(info["valid_dir"]).parent.parent)
    program = work / "replay"
    subprocess.run(["g++", "-std=c++17", "-O2", *[f"-I{d}" for d in build.include_dirs],
                    str(HARNESS), *map(str, build.libraries), "-lm", "-o", str(program)],
                   check=True)
    return program


@pytest.mark.gem5
@pytest.mark.parametrize("profile", [PROFILE, "desktop-disksim-ibm18es-sata-64"])
@needs_disksim_gem5
def test_the_drive_in_gem5_answers_every_request_as_disksim_standalone(tmp_path, profile):
    """One guest job (disk-calib: random and sequential reads and writes) on a DiskSim
    profile, its drive logging each request it served; the same requests at the same
    times (the boot's, replayed at the restore, and the run's) through DiskSim standalone
    (tests/disksim/replay.cc, DiskSim's own interface driven as its example does, with
    the profile's overrides and, for the derived drive, its rewritten platters) complete
    at the same times, to the last bit of the double. What the IDE command adds to each
    (its register writes, PRD fetch, DMA and interrupt) is printed beside it."""
    spec, prepared, params = prepared_disk_calib(profile, "disksim")
    out = tmp_path / "run"
    _simulate(prepared, {**params, "disk_request_log": True}, out)
    log = (out / "disksim-requests-0.txt").read_text().splitlines()
    live = [line.split() for line in log if line.startswith("live ")]
    assert len(live) > 100, len(log)
    program = _harness(prepared.parts["gem5"], tmp_path)
    timing = get_system(profile).disk.timing
    searched = gem5_backend.with_derived_drive(prepared.parts["gem5"], params)["disk_timing"]
    answered = subprocess.run(
        [str(program), str(timing.parameters_path),
         *[value for triple in timing.overrides for value in triple]],
        input="\n".join(log) + "\n", capture_output=True, text=True, check=True,
        env={**os.environ, "LP_PATH": searched.get("search_path")
             or prepared.parts["gem5"].disksim["valid_dir"]}).stdout
    standalone = dict(line.split() for line in answered.splitlines())
    differ = [(fields[1], fields[7], standalone.get(fields[1])) for fields in live
              if standalone.get(fields[1]) != fields[7]]
    assert not differ, differ[:5]
    # The statistics hold the job's phases (the guest resets them at each), the log every
    # request since the restore.
    stats = _drive_stats(out)
    commands = stats["reads"] + stats["writes"]
    assert 0 < commands <= len(live)
    service = sum(float(f[7]) - float(f[3]) for f in live)
    print(f"{len(live)} requests ({len(log) - len(live)} replayed from the boot) answered "
          f"identically; DiskSim's service {service / len(live):.4f} ms a request; in the "
          f"phases, {commands:.0f} commands, the drive's service "
          f"{stats['serviceTicks'] / commands / 1e9:.4f} ms a command and the IDE command "
          f"{stats['ideTicks'] / commands / 1e9:.4f} ms more "
          f"({stats['ideTicks'] / stats['commandTicks']:.2%} of the commands' time)")
    assert stats["commandTicks"] == pytest.approx(stats["serviceTicks"] + stats["ideTicks"],
                                                  rel=1e-3)
    assert 0 < stats["ideTicks"] < stats["commandTicks"]


@pytest.mark.gem5
@needs_disksim_gem5
def test_a_repetitions_seed_moves_the_drive_and_the_same_seed_repeats_it(tmp_path):
    """The same job from the same boot checkpoint: the drive's seed (a time offset, where
    its platters stand under the requests) changes its rotational waits and so every
    service time; the same seed gives the same drive, statistic for statistic."""
    spec, prepared, params = _prepared()

    def run(name, seed):
        out = tmp_path / name
        _simulate(prepared, {**params, "disk_seed": seed}, out)
        records = [(r["kind"], r.get("mean_latency_s")) for r in read_events(out)
                   if r["event"] == "record"] if (out / "events.jsonl").is_file() else []
        return _drive_stats(out), select_values(out / "stats.txt", [r"simTicks$"]), records

    first = run("a", params["disk_seed"])
    assert run("b", params["disk_seed"]) == first
    other = run("c", params["disk_seed"] + 7)
    assert other[0]["rotationTicks"] != first[0]["rotationTicks"]
    assert other[0]["serviceTicks"] != first[0]["serviceTicks"]
    assert other[1] != first[1]
    print("rotation ms, seed", params["disk_seed"], first[0]["rotationTicks"] / 1e9,
          "seed", params["disk_seed"] + 7, other[0]["rotationTicks"] / 1e9)


@pytest.mark.gem5
@needs_disksim_gem5
def test_every_restore_gives_back_the_drive_that_served_the_run_so_far(tmp_path):
    """DiskSim saves no state: each segment of a run restores a checkpoint holding the
    log of every request the drive served since boot, and replays it into a fresh
    DiskSim. Cut into segments at its phase boundaries and every 0.1 simulated s, the
    run's drive must be, in every segment, the one DiskSim that served all of it: each
    segment replays exactly the requests served before it, and the whole run's requests,
    through DiskSim standalone in one go, complete when gem5's drive said they did."""
    from reclaimstudy.backends.gem5.segments import run_segmented

    spec, prepared, params = _prepared()
    gem5, logs = prepared.parts["gem5"], tmp_path / "logs"
    logs.mkdir()
    (tmp_path / "run").mkdir()

    def simulate(segment_params, outdir, timeout_s):
        result = gem5_backend.simulate(gem5, segment_params, outdir, timeout_s=timeout_s)
        shutil.copy(outdir / "disksim-requests-0.txt", logs / f"{outdir.name}.txt")
        return result

    result = run_segmented(simulate, {**params, "disk_request_log": True},
                           prepared.parts["checkpoint"] / "cpt", 0.1, tmp_path / "work",
                           tmp_path / "run", 3600)
    assert result["status"] == "exit" and result["segments"] >= 4, result
    segments = [[line.split() for line in path.read_text().splitlines()]
                for path in sorted(logs.glob("seg-*.txt"))]
    request = lambda fields: (fields[2], fields[4], fields[5], fields[6])  # noqa: E731
    served = [request(f) for f in segments[0] if f[0] == "replay"]  # the boot's
    for lines in segments:
        assert [request(f) for f in lines if f[0] == "replay"] == served
        served += [request(f) for f in lines if f[0] == "live"]
    whole = [f for f in segments[0] if f[0] == "replay"] + \
        [f for lines in segments for f in lines if f[0] == "live"]
    # Each segment numbers its log from 0: number the whole run's requests afresh.
    program = _harness(gem5, tmp_path)
    renumbered = "\n".join(" ".join([f[0], str(i), *f[2:]]) for i, f in enumerate(whole))
    answered = subprocess.run(
        [str(program), str(get_system(PROFILE).disk.timing.parameters_path)],
        input=renumbered + "\n", capture_output=True, text=True, check=True,
        env={**os.environ, "LP_PATH": gem5.disksim["valid_dir"]}).stdout
    standalone = dict(line.split() for line in answered.splitlines())
    differ = [(i, f[7], standalone[str(i)]) for i, f in enumerate(whole)
              if f[0] == "live" and standalone[str(i)] != f[7]]
    assert not differ, differ[:5]
    live = [f for f in whole if f[0] == "live"]
    replayed = sum(f[0] == "replay" for lines in segments for f in lines)
    print(f"{len(segments)} segments, {len(live)} requests served ({len(whole) - len(live)} "
          f"by the boot); the restores replayed {replayed} in all; every answer as one "
          f"DiskSim's")
