"""SimpleSSD as gem5's SATA SSD and a phone's eMMC: gem5-patches/0006's SimpleSSDTiming
behind the IDE disk at queue depth 1, the profile desktop-sata-ssd-64 ([disk.timing] model
= "simplessd"), the same drive behind an eMMC bus (0008; mobile-emmc-samsung-pro-32gb-64)
and `./study gem5 --simplessd DIR`.

On the host alone: the profile, the keys and the refusals. With SIMPLESSD (a
SimpleSSD-Standalone checkout): the patch's engine, built outside gem5
(tests/simplessd/serve.cc), completes every command at the picosecond
SimpleSSD-Standalone's trace replayer does behind simplessd-patches/0004's SATA link (and,
for the eMMC, behind 0006's eMMC bus), a
second process repeats it, and a drive that would draw from std::random_device is
refused. With GEM5 (a gem5 built with --simplessd; marked gem5): the drive inside gem5
answers every command as SimpleSSD standalone does, every restore gives back the drive
that served the run so far, and the guest sees a non-rotating disk and swaps to it as
solid state."""

import json
import os
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from reclaimstudy.artefacts import gem5 as gem5_build, simplessd as simplessd_build
from reclaimstudy.backends.gem5 import backend as gem5_backend
from reclaimstudy.backends.guest import DEVICES
from reclaimstudy.config.systems import SimplessdTiming, get_system
from reclaimstudy.errors import StudyError
from reclaimstudy.hashing import file_sha256
from tests.gem5_drives import (drive_stats, gem5_binary, needs_gem5_for,
                               prepared_disk_calib, series_file, system_toml)

PROFILE = "desktop-sata-ssd-64"
EMMC_PROFILE = "mobile-emmc-samsung-pro-32gb-64"
# Each profile's link, as serve.cc names it, and SimpleSSD-Standalone's [global] Interface
# for the same link (simplessd-patches/0004's SATA, 0006's eMMC).
LINKS = {PROFILE: ("sata", 2), EMMC_PROFILE: ("emmc", 4)}
SERVE = Path(__file__).parent / "simplessd" / "serve.cc"
TICKS_PER_US = 10**6

# --- the profile, keys and refusals (host only) ---


def test_the_simplessd_profile_is_the_850_pro_on_one_non_rotating_drive():
    system = get_system(PROFILE)
    timing = system.disk.timing
    assert isinstance(timing, SimplessdTiming)
    assert "Samsung SSD 850 PRO 256 GB" in timing.drive
    assert timing.config_path.is_file() and system.disk.swap == "partition"
    assert "partly validated" in timing.validation and "RESULTS.md" in timing.validation
    assert (system.disk.rotation_rate, system.disk.rotational) == (1, False)
    assert not system.disk.reports_write_cache
    # The drive is our description by its content; the validation's wording is not part
    # of what a run is.
    identity = system.identity()["disk"]["timing"]
    assert identity["config_sha256"] == file_sha256(timing.config_path)
    assert "validation" not in identity
    params = gem5_backend.disk_timing_params(system)
    assert params["config_path"] == str(timing.config_path) and params["model"] == "simplessd"


def _simplessd_toml(swap: str = "partition", **timing) -> str:
    return system_toml({"profile": "ssd", "swap": swap, "swap_mib": 256},
                       {"model": "simplessd", "drive": "a drive",
                        "config": "samsung-850-pro-256gb.cfg",
                        "validation": "as in tests/benchmarks/RESULTS.md", **timing})


@pytest.mark.parametrize("swap, timing, message", [
    ("partition", {"config": "nowhere.cfg"}, r"config = 'nowhere.cfg': not a file in .*simplessd"),
    ("partition", {"validation": "fine"}, r"validation: say which published figures"),
    ("device", {}, r"swap = 'device': a gem5 process holds one SimpleSSD drive .* allowed: "
                   r"swap = \"partition\""),
    # A phone's eMMC is described for its own bus, not a SATA link, and a SATA drive is
    # not an eMMC: each is refused behind the other's link.
    ("partition", {"config": "samsung-emmc-pro-32gb.cfg"},
     r"interface = 'sata': samsung-emmc-pro-32gb.cfg describes no SATA link \(no \[sata\] "
     r"SATAMode\)"),
    ("partition", {"interface": "emmc"},
     r"interface = 'emmc': samsung-850-pro-256gb.cfg describes a SATA link .* give a "
     r"phone's eMMC, e.g. samsung-emmc-pro-32gb.cfg"),
    ("partition", {"interface": "ufs"}, r"interface.*allowed: sata, nvme, emmc"),
])
def test_a_simplessd_drive_says_what_it_is_or_is_refused(tmp_path, swap, timing, message):
    (tmp_path / "bad.toml").write_text(_simplessd_toml(swap, **timing))
    with pytest.raises(StudyError, match=message):
        get_system("bad", tmp_path)


def binary(simplessd: dict | None = None) -> gem5_backend.Gem5:
    return gem5_binary(simplessd=simplessd)


SIMPLESSD = {"key": "9809e9a43ddacadc", "version": "2.0.13", "timing": "simplessd-timing-1",
             "include_dirs": ["/cache/simplessd/9809e9a43ddacadc/source/simplessd"]}


def test_a_simplessd_profile_refuses_a_gem5_without_simplessd_naming_the_fix():
    with pytest.raises(StudyError, match=r"desktop-sata-ssd-64 times its disk with SimpleSSD .* "
                                         r"built without SimpleSSD: build gem5 with SimpleSSD "
                                         r"linked in: `./study gem5 --source GEM5_DIR "
                                         r"--simplessd SIMPLESSD_DIR`"):
        gem5_backend.require_patches(binary(), get_system(PROFILE))
    gem5_backend.require_patches(binary(SIMPLESSD), get_system(PROFILE))


def test_simplessd_runs_are_keyed_by_the_simplessd_in_the_binary_and_no_other_run_is():
    ssd, sata = get_system("desktop-ssd-64"), get_system(PROFILE)
    plain, linked = binary(), binary(SIMPLESSD)
    assert plain.key_for(ssd) == linked.key_for(ssd) == linked.simulator_key
    other_build = binary({**SIMPLESSD, "key": "feedfacefeedface"})
    other_model = binary({**SIMPLESSD, "timing": "simplessd-timing-2"})
    moved = binary({**SIMPLESSD, "include_dirs": ["/elsewhere"]})
    keys = {b.key_for(sata) for b in (linked, other_build, other_model)}
    assert len(keys) == 3 and linked.simulator_key not in keys
    assert moved.key_for(sata) == linked.key_for(sata)  # where it lies is not what it is
    assert linked.identity()["simplessd"] == {k: SIMPLESSD[k] for k in ("key", "version", "timing")}
    assert "simplessd" not in plain.identity()


def fake_simplessd_build(directory: Path, key: str = "feedfacefeedface"):
    directory.mkdir(parents=True)
    (directory / "manifest.json").write_text(json.dumps({
        "key": key, "simplessd_version": "2.0.13", "simplessd_commit": "7" * 40,
        "patches": [{"name": "0004-sata-link-front-end.patch", "sha256": "s"}]}))
    return simplessd_build.SimpleSSDBuild(directory)


def test_the_gem5_build_key_holds_simplessd_only_when_it_is_linked_in(tmp_path):
    from tests.test_gem5_build import fake_checkout
    source = fake_checkout(tmp_path / "gem5")
    plain = gem5_build.build_inputs(source, "fast")
    assert "simplessd" not in plain  # a build without SimpleSSD is keyed as it always was
    linked = gem5_build.build_inputs(source, "fast", None, fake_simplessd_build(tmp_path / "s1"))
    assert linked["simplessd"]["key"] == "feedfacefeedface"
    other = gem5_build.build_inputs(source, "fast", None,
                                    fake_simplessd_build(tmp_path / "s2", "beef"))
    assert len({gem5_build.json_sha256(i) for i in (plain, linked, other)}) == 3
    namespace: dict = {}
    exec(gem5_build.simplessd_module(fake_simplessd_build(tmp_path / "s3")), namespace)
    info = namespace["RECLAIMSTUDY_SIMPLESSD"]  # what 0006's SConscript and identify.py read
    assert info["key"] == "feedfacefeedface"
    assert [Path(p).name for p in info["libraries"]] == ["libsimplessd.a", "libmcpat.a"]
    assert info["include_dirs"][0].endswith("source/simplessd")


EMMC_LINKED = {**SIMPLESSD, "emmc": "simplessd-emmc-1"}


def test_the_phone_profile_is_the_emmc_behind_its_bus_on_one_non_rotating_device():
    system = get_system(EMMC_PROFILE)
    timing = system.disk.timing
    assert isinstance(timing, SimplessdTiming) and timing.interface == "emmc"
    assert "eMMC 5.0" in timing.drive and timing.config == "samsung-emmc-pro-32gb.cfg"
    assert (system.memory.type, system.memory.size_mib) == ("LPDDR3_1600", 64)
    assert (system.disk.swap, system.disk.rotational, system.disk.nvme) == (
        "partition", False, False)
    assert system.identity()["disk"]["timing"]["interface"] == "emmc"
    assert gem5_backend.disk_timing_params(system)["interface"] == "emmc"


def test_the_phone_profile_needs_a_gem5_with_the_emmc_bus_and_is_keyed_by_it():
    phone, sata = get_system(EMMC_PROFILE), get_system(PROFILE)
    with pytest.raises(StudyError, match=r"behind an eMMC bus .* needs gem5-patches/0008, "
                                         r"but GEM5=/opt/gem5.fast was built without it .* "
                                         r"holds 0008"):
        gem5_backend.require_patches(binary(SIMPLESSD), phone)
    gem5_backend.require_patches(binary(EMMC_LINKED), phone)
    with_emmc, without = binary(EMMC_LINKED), binary(SIMPLESSD)
    # A SATA drive's runs keep their key whether or not 0008 is built in; the phone's
    # runs are keyed by the bus's version too.
    assert with_emmc.key_for(sata) == without.key_for(sata)
    assert with_emmc.key_for(phone) != with_emmc.key_for(sata)
    assert binary({**EMMC_LINKED, "emmc": "simplessd-emmc-2"}).key_for(phone) != \
        with_emmc.key_for(phone)
    assert with_emmc.identity()["simplessd"]["emmc"] == "simplessd-emmc-1"
    assert gem5_backend.script_key(phone) == gem5_backend.SCRIPT_KEYS["simplessd-emmc"]
    assert gem5_backend.script_key(sata) == gem5_backend.SCRIPT_KEYS["simplessd"]


def test_the_series_holds_0006_after_0005():
    names = [p.name for p in gem5_build.read_series().patches]
    assert names[names.index("0005-disksim-timing.patch") + 1] == "0006-simplessd-timing.patch"


# --- the engine outside gem5, against SimpleSSD-Standalone (SIMPLESSD: a checkout) ---

SOURCE = os.environ.get("SIMPLESSD")
needs_simplessd = pytest.mark.skipif(
    not SOURCE, reason="SIMPLESSD is not set: name a SimpleSSD-Standalone checkout "
                       "(github.com/SimpleSSD/SimpleSSD-Standalone, submodules checked out)")


def serve_program(build: simplessd_build.SimpleSSDBuild, work: Path) -> Path:
    """tests/simplessd/serve.cc with 0006's engine, linked with the SimpleSSD build and the
    DRAMPower its driver compiled (gem5 links its own)."""
    tree = work / "src"
    for name in ("simplessd_engine.hh", "simplessd_engine.cc"):
        target = tree / "dev" / "storage" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(series_file(f"src/dev/storage/{name}"))
    drampower = sorted((build.directory / "build" / "CMakeFiles" / "simplessd-standalone.dir"
                        / "lib" / "drampower").rglob("*.o"))
    assert drampower, f"no DRAMPower objects in {build.directory}/build"
    program = work / "serve"
    subprocess.run(["g++", "-std=c++17", "-O2", "-Wall", "-Werror", f"-I{tree}",
                    *[f"-isystem{d}" for d in build.include_dirs],
                    str(tree / "dev" / "storage" / "simplessd_engine.cc"), str(SERVE),
                    *map(str, build.libraries), *map(str, drampower), "-lpthread",
                    "-o", str(program)], check=True)
    return program


def serve(program: Path, config: Path, commands: list[str], link: str = "sata"
          ) -> list[list[str]]:
    """Each command's "arrival kind sector sectors done link", in order."""
    out = subprocess.run([str(program), str(config), link], input="\n".join(commands) + "\n",
                         capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    return [line.split() for line in lines[:lines.index(next(
        l for l in lines if l.startswith("statistics ")))]]


TRACE_SIMULATION = """[global]
Mode = 1
LogPeriod = 0
LogFile = STDOUT
DebugLogFile =
LatencyLogFile = latency.csv
ProgressPeriod = 0
Interface = 2
Scheduler = 0
SubmissionLatency = 0
CompletionLatency = 0
[trace]
File = trace.txt
TimingMode = 2
QueueDepth = 32
IOLimit = 0
Regex = "(\\d+) ([RW]) (\\d+) (\\d+)"
Operation = 2
ByteOffset = 0
ByteLength = 0
LBAOffset = 3
LBALength = 4
Second = 0
Millisecond = 0
Microsecond = 0
Nanosecond = 0
Picosecond = 1
LBASize = 512
UseHexadecimal = 0
"""


def standalone_latencies(build: simplessd_build.SimpleSSDBuild, config: Path,
                         commands: list[tuple[int, str, int, int]], work: Path,
                         interface: int = 2) -> list[int]:
    """SimpleSSD-Standalone's trace replayer, strict timing (each command at its arrival,
    relative to the first), behind the link `interface` (2: 0004's SATA link, 4: 0006's
    eMMC bus): each command's latency in ticks."""
    work.mkdir(parents=True)
    (work / "trace.txt").write_text("".join(f"{a} {k} {s} {n}\n" for a, k, s, n in commands))
    (work / "simulation.cfg").write_text(
        TRACE_SIMULATION.replace("Interface = 2\n", f"Interface = {interface}\n"))
    subprocess.run([str(build.binary), "simulation.cfg", str(config), "."], cwd=work,
                   check=True, capture_output=True)
    rows = [line.split(", ") for line in (work / "latency.csv").read_text().splitlines()]
    # At queue depth 1 they complete in order; the offsets say they are the same commands.
    assert [(int(r[1]), int(r[2])) for r in rows] == [(s * 512, n * 512)
                                                     for _, _, s, n in commands]
    return [int(r[3]) for r in rows]


def commands(count: int, seed: int) -> list[str]:
    """Commands at queue depth 1, each some time after the last completed: 4 KiB random,
    4-512 KiB at any sector (across SimpleSSD's logical pages), and a 128 KiB stream."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        gap = rng.choice([0, 4 * TICKS_PER_US, 20 * TICKS_PER_US,
                          rng.randrange(1, 2000 * TICKS_PER_US)])
        kind = rng.choice("RRW" if i % 2 else "RWW")
        shape = rng.random()
        if shape < 0.5:
            sector, sectors = rng.randrange(0, 2 << 20) * 8, 8
        elif shape < 0.8:
            sector, sectors = rng.randrange(0, 16 << 20), rng.choice([8, 16, 64, 128, 256, 1024])
        else:
            sector, sectors = i * 256, 256
        out.append(f"+{gap} {kind} {sector} {sectors}")
    return out


@pytest.mark.source
@needs_simplessd
@pytest.mark.parametrize("profile", [PROFILE, EMMC_PROFILE])
def test_the_patchs_engine_answers_as_simplessd_standalone_to_the_picosecond(tmp_path,
                                                                            profile):
    build = simplessd_build.build_simplessd(Path(SOURCE))
    config = get_system(profile).disk.timing.config_path
    link, interface = LINKS[profile]
    program = serve_program(build, tmp_path)
    served = serve(program, config, commands(3000, 77), link)
    absolute = [f"{a} {k} {s} {n}" for a, k, s, n, *_ in served]
    assert serve(program, config, absolute, link) == served  # another process, same drive
    latencies = standalone_latencies(
        build, config, [(int(a), k, int(s), int(n)) for a, k, s, n, *_ in served],
        tmp_path / "standalone", interface)
    ours = [int(done) - int(arrival) for arrival, _, _, _, done, _ in served]
    differ = [(i, ours[i], latencies[i]) for i in range(len(ours)) if ours[i] != latencies[i]]
    assert not differ, differ[:5]
    on_link = sum(int(f[5]) for f in served)
    print(f"{profile}: {len(ours)} commands behind {link}, every completion as "
          f"SimpleSSD-Standalone's; mean {sum(ours) / len(ours) / TICKS_PER_US:.1f} us, "
          f"{on_link / sum(ours):.1%} of it on the link")


def with_setting(config: Path, section: str, key: str, value: str, target: Path) -> Path:
    """A copy of a SimpleSSD configuration with one key of one section changed."""
    lines, current = [], None
    for line in config.read_text().splitlines():
        header = re.match(r"\[(\w+)\]", line)
        current = header[1] if header else current
        if current == section and re.match(rf"{key}\s*=", line):
            line = f"{key} = {value}"
        lines.append(line)
    target.write_text("\n".join(lines) + "\n")
    return target


@pytest.mark.source
@needs_simplessd
@pytest.mark.parametrize("section, key, value, message", [
    ("icl", "EvictPolicy", "0", r"\[icl\] EvictPolicy = 0 \(random\) draws from "
                                r"std::random_device; allowed: 1 \(FIFO\) or 2 \(LRU\)"),
    ("ftl", "EvictPolicy", "3", r"\[ftl\] EvictPolicy = 3 draws from std::random_device; "
                                r"allowed: 0 \(greedy\) or 1 \(cost-benefit\)"),
    ("ftl", "FillingMode", "2", r"\[ftl\] FillingMode = 2 .* draws the warm-up"),
])
def test_a_drive_that_would_draw_at_random_is_refused(tmp_path, section, key, value, message):
    build = simplessd_build.build_simplessd(Path(SOURCE))
    program = serve_program(build, tmp_path)
    config = with_setting(get_system(PROFILE).disk.timing.config_path, section, key, value,
                          tmp_path / "random.cfg")
    result = subprocess.run([str(program), str(config)], input="", capture_output=True,
                            text=True)
    assert result.returncode == 1 and re.search(message, result.stderr), result.stderr


# --- inside gem5 (GEM5: a gem5 built with --simplessd) ---

needs_simplessd_gem5 = needs_gem5_for(
    PROFILE, "./study gem5 --source GEM5_DIR --simplessd SIMPLESSD_DIR")
DRIVE = (r"ide\.disks\d*\.timing\.(serviceTicks|commandTicks|ideTicks|linkTicks|reads|writes"
         r"|simplessd::(read_request_count|write_request_count|ftl_page_mapping_gc_count))$")


def _prepared(profile: str = PROFILE):
    return prepared_disk_calib(profile, "simplessd")


def _linked_build(gem5: gem5_backend.Gem5) -> simplessd_build.SimpleSSDBuild:
    """The SimpleSSD build linked into this gem5 (its headers' folder is in its tree)."""
    return simplessd_build.SimpleSSDBuild(Path(gem5.simplessd["include_dirs"][0]).parent.parent)


def _drive_stats(out: Path) -> dict[str, float]:
    return drive_stats(out, DRIVE)


def _log(path: Path) -> list[list[str]]:
    """The drive's request log: kind (live or replay), number, arrival, R/W, sector,
    sectors, completion."""
    return [line.split() for line in path.read_text().splitlines()]


def _check_against_standalone(gem5, lines: list[list[str]], work: Path,
                              profile: str = PROFILE) -> None:
    """Every command of `lines` (the boot's, replayed, then the run's), served in one
    SimpleSSD outside gem5 and by SimpleSSD-Standalone's trace replayer, completes when
    gem5's drive said it did."""
    build = _linked_build(gem5)
    config = get_system(profile).disk.timing.config_path
    link, interface = LINKS[profile]
    served = serve(serve_program(build, work), config,
                   [f"{f[2]} {f[3]} {f[4]} {f[5]}" for f in lines], link)
    differ = [(i, f[6], s[4]) for i, (f, s) in enumerate(zip(lines, served)) if f[6] != s[4]]
    assert not differ, differ[:5]
    latencies = standalone_latencies(build, config, [(int(f[2]), f[3], int(f[4]), int(f[5]))
                                                     for f in lines], work / "standalone",
                                     interface)
    differ = [(i, int(f[6]) - int(f[2]), latencies[i]) for i, f in enumerate(lines)
              if int(f[6]) - int(f[2]) != latencies[i]]
    assert not differ, differ[:5]


needs_emmc_gem5 = needs_gem5_for(
    EMMC_PROFILE, "./study gem5 --source GEM5_DIR --simplessd SIMPLESSD_DIR")


@pytest.mark.gem5
@pytest.mark.parametrize("profile", [
    pytest.param(PROFILE, marks=needs_simplessd_gem5),
    pytest.param(EMMC_PROFILE, marks=needs_emmc_gem5)])
def test_the_drive_in_gem5_answers_every_command_as_simplessd_standalone(tmp_path, profile):
    """One guest job (disk-calib: random and sequential reads and writes) on the SimpleSSD
    profile, its drive logging each command it served; the same commands at the same
    ticks (the boot's, replayed at the restore, and the run's) through the engine outside
    gem5 and through SimpleSSD-Standalone complete at the same picosecond. What the IDE
    command adds to each is printed beside it."""
    spec, prepared, params = _prepared(profile)
    out = tmp_path / "run"
    result = gem5_backend.simulate(prepared.parts["gem5"], {**params, "disk_request_log": True},
                                   out, timeout_s=3600)
    assert result["status"] == "exit", result
    lines = _log(out / "simplessd-requests-0.txt")
    live = [f for f in lines if f[0] == "live"]
    assert len(live) > 100, len(lines)
    _check_against_standalone(prepared.parts["gem5"], lines, tmp_path / "check", profile)
    stats = _drive_stats(out)
    commands_ = stats["reads"] + stats["writes"]
    assert 0 < commands_ <= len(live)
    assert stats["simplessd::read_request_count"] == stats["reads"]
    assert stats["simplessd::write_request_count"] == stats["writes"]
    assert stats["commandTicks"] == pytest.approx(stats["serviceTicks"] + stats["ideTicks"],
                                                  rel=1e-3)
    assert 0 < stats["linkTicks"] < stats["serviceTicks"]
    print(f"{profile}: {len(live)} commands ({len(lines) - len(live)} replayed from the boot) "
          f"answered "
          f"as SimpleSSD standalone; in the phases {commands_:.0f} commands, the drive's "
          f"service {stats['serviceTicks'] / commands_ / TICKS_PER_US:.1f} us a command "
          f"(the link {stats['linkTicks'] / commands_ / TICKS_PER_US:.1f}), the IDE command "
          f"{stats['ideTicks'] / commands_ / TICKS_PER_US:.1f} us more; GC runs "
          f"{stats.get('simplessd::ftl_page_mapping_gc_count', 0):.0f}")


@pytest.mark.gem5
@needs_simplessd_gem5
def test_every_restore_gives_back_the_drive_that_served_the_run_so_far(tmp_path):
    """SimpleSSD saves no state: each segment of a run restores a checkpoint holding every
    command the drive served since boot and serves them again in a fresh SimpleSSD
    (gem5 stops if one completes at another tick). Cut at its phase boundaries and every
    0.1 simulated s, each segment replays exactly the commands served before it, and the
    whole run's commands, served in one SimpleSSD outside gem5 and by
    SimpleSSD-Standalone, complete when gem5's drive said they did."""
    from reclaimstudy.backends.gem5.segments import run_segmented

    spec, prepared, params = _prepared()
    gem5, logs = prepared.parts["gem5"], tmp_path / "logs"
    logs.mkdir()
    (tmp_path / "run").mkdir()

    def simulate(segment_params, outdir, timeout_s):
        result = gem5_backend.simulate(gem5, segment_params, outdir, timeout_s=timeout_s)
        shutil.copy(outdir / "simplessd-requests-0.txt", logs / f"{outdir.name}.txt")
        return result

    result = run_segmented(simulate, {**params, "disk_request_log": True},
                           prepared.parts["checkpoint"] / "cpt", 0.1, tmp_path / "work",
                           tmp_path / "run", 3600)
    assert result["status"] == "exit" and result["segments"] >= 4, result
    segments = [_log(path) for path in sorted(logs.glob("seg-*.txt"))]
    command = lambda f: tuple(f[2:7])  # noqa: E731 (arrival, kind, sector, sectors, done)
    served = [command(f) for f in segments[0] if f[0] == "replay"]  # the boot's
    for lines in segments:
        assert [command(f) for f in lines if f[0] == "replay"] == served
        served += [command(f) for f in lines if f[0] == "live"]
    whole = [f for f in segments[0] if f[0] == "replay"] + \
        [f for lines in segments for f in lines if f[0] == "live"]
    _check_against_standalone(gem5, whole, tmp_path / "check")
    replayed = sum(f[0] == "replay" for lines in segments for f in lines)
    print(f"{len(segments)} segments, {len(whole)} commands served (the boot's included); "
          f"the restores served {replayed} again; every answer as one SimpleSSD's")


@pytest.mark.gem5
@pytest.mark.parametrize("profile", [
    pytest.param(PROFILE, marks=needs_simplessd_gem5),
    pytest.param(EMMC_PROFILE, marks=needs_emmc_gem5)])
def test_the_guest_sees_a_non_rotating_disk_and_swaps_to_it_as_solid_state(tmp_path, profile):
    from tests.test_gem5_device_class import assert_swaps_to, device_class_view

    view = device_class_view(profile, tmp_path)
    assert view["rotational"] == {"sda": 0}, view
    assert_swaps_to(view, DEVICES["partition"][1], solid_state=True)
