"""Policies, system profiles and workload descriptions: valid ones load, bad ones are named."""

import re

import pytest

from reclaimstudy.cli import parse_params
from reclaimstudy.config import disk_model, policies, systems, workloads
from reclaimstudy.errors import StudyError


def test_every_policy_loads_with_all_knobs_filled_in():
    loaded = policies.load_policies()
    assert "baseline" in loaded and "mglru" in loaded
    for policy in loaded.values():
        assert set(policy.knobs.model_dump()) == set(policies.KNOBS)
    assert loaded["baseline"].knobs.model_dump() == {k: d for k, (_, _, d) in policies.KNOBS.items()}
    assert loaded["exec-protect-off"].knobs.exec_protect == 2  # seed 000's half only
    assert loaded["exec-protect-all-off"].knobs.exec_protect == 0
    assert loaded["old-refault-distance-scan-anon-off"].knobs.model_dump() == {
        **loaded["baseline"].knobs.model_dump(), "refault_active_file_only": 1,
        "refault_scan_anon": 0}
    assert loaded["mglru"].lru_gen and not loaded["baseline"].lru_gen


def test_every_profile_has_one_guest_layout_and_every_layout_its_devices():
    """Disk.guest_layout decides how the guest meets root and swap; DEVICES in
    reclaimstudy/backends/guest.py names the devices of each layout, no more, no fewer."""
    from reclaimstudy.backends.guest import DEVICES
    assert set(DEVICES) == set(systems.GUEST_LAYOUTS)
    layouts = {name: systems.get_system(name).disk.guest_layout
               for name in systems.system_names()}
    assert set(layouts.values()) == set(systems.GUEST_LAYOUTS)
    assert (layouts["desktop-ssd-64"], layouts["desktop-hdd-64"], layouts["desktop-nvme-ssd-64"],
            layouts["desktop-zram-64"]) == ("device", "partition", "nvme", "zram")
    for name, layout in layouts.items():
        disk = systems.get_system(name).disk
        # An IDE layout is the profile's swap layout; an NVMe drive's is "nvme".
        assert layout == ("nvme" if disk.nvme else disk.swap), name


def test_job_knobs_is_sorted_name_value_words():
    policy = policies.get_policy("use-once-mapped-off")
    assert policy.job_knobs() == ("exec_protect=3 madv_free=1 refault_active_file_only=0 "
                                  "refault_scan_anon=1 use_once=1")


@pytest.mark.parametrize("body, message", [
    ('[p]\ndescription="x"\nknobs={bogus=1}\n',
     "[p] [knobs]: unknown key(s) bogus; allowed: exec_protect, madv_free, "
     "refault_active_file_only, refault_scan_anon, use_once"),
    ('[p]\ndescription="x"\nknobs={use_once=4}\n', "[p] [knobs]: use_once = 4; allowed: integers 0..3"),
    ('[p]\ndescription="x"\nknobs={madv_free=true}\n', "madv_free = True; allowed: integers 0..1"),
    ('[p]\ndescription="x"\nlru_gen="yes"\n', "[p]: lru_gen = 'yes'; allowed: true or false"),
    ('[p]\nknobs={}\n', "[p]: missing key(s) description"),
    ('[p]\ndescription="x"\ncolour=1\n', "[p]: unknown key(s) colour; allowed: description, knobs, lru_gen, seed"),
])
def test_bad_policies_are_rejected_naming_the_value(tmp_path, body, message):
    path = tmp_path / "policies.toml"
    path.write_text(body)
    with pytest.raises(StudyError, match=re.escape(message)):
        policies.load_policies(path)


def test_unknown_policy_lists_the_allowed_ones():
    with pytest.raises(StudyError, match="unknown policy 'nope'; allowed .*baseline"):
        policies.get_policy("nope")


def test_every_system_profile_loads():
    names = systems.system_names()
    assert {"desktop-hdd", "desktop-ssd", "mobile-lpddr", "ci-tiny"} <= set(names)
    for name in names:
        system = systems.get_system(name)
        assert systems.MIN_MEMORY_MIB <= system.memory_mib <= systems.MAX_MEMORY_MIB
    hdd, ssd = systems.get_system("desktop-hdd"), systems.get_system("desktop-ssd")
    assert (hdd.disk.timing.model, ssd.disk.timing.model) == ("hdd", "flash")
    assert disk_model.random_access_s(hdd.disk.timing, False, 4096, 1 << 17) > \
        20 * disk_model.random_access_s(ssd.disk.timing, False, 4096)
    # The hard disk's one spindle holds swap as a partition: its own boot checkpoint.
    assert (hdd.disk.swap, ssd.disk.swap) == ("partition", "device")
    assert {k: v for k, v in hdd.memory_layout().items() if k not in ("swap", "write_cache")} \
        == {k: v for k, v in ssd.memory_layout().items() if k != "swap"}
    # The guest learns at boot whether the drive caches writes, and flushes by it: a disk
    # without one (the null disk of the calibration) must not share the hard disk's boot.
    assert hdd.disk.reports_write_cache and not ssd.disk.reports_write_cache
    assert hdd.memory_layout()["write_cache"] is True
    assert "write_cache" not in disk_model.null_disk(hdd).memory_layout()
    assert "write_cache" not in ssd.memory_layout()  # layouts without one keep their keys




def _system_toml(memory="size_mib = 256\ntype = \"DDR3_1600\"", cpu='model = "timing"',
                 caches='hierarchy = "none"'):
    return (f'description = "x"\n[cpu]\n{cpu}\ncores = 1\nclock = "2GHz"\n[caches]\n{caches}\n'
            f'[memory]\n{memory}\n[disk]\nprofile = "hdd"\ndelay_us = 2000\nswap_mib = 256\n')


@pytest.mark.parametrize("text, message", [
    (_system_toml(memory='size_mib = 32\ntype = "DDR3_1600"'), r"bad.toml \[memory\]: size_mib = 32; allowed: integers 64..3072"),
    (_system_toml(memory='size_mib = 256\ntype = "DDR9"'), "type = 'DDR9'; allowed: DDR3_1600"),
    (_system_toml(cpu='model = "kvm"'), "model = 'kvm'; allowed: atomic, timing, o3"),
    (_system_toml().replace("delay_us = 2000", "delay_us = 2148"),
     "delay_us = 2148; more than gem5 v24.0 can model; allowed: up to 2147"),
    (_system_toml(caches='hierarchy = "private-l1-private-l2"\nl1d = "32KiB"'), "l1i is required"),
    (_system_toml(caches='hierarchy = "private-l1-private-l2"\nl1d = "32k"\nl1i = "32KiB"\nl2 = "1MiB"'),
     "l1d = '32k'; expected a value like '32KiB'"),
])
def test_bad_system_profiles_are_rejected_naming_the_value(tmp_path, text, message):
    (tmp_path / "bad.toml").write_text(text)
    with pytest.raises(StudyError, match=message.replace("(", r"\(")):
        systems.get_system("bad", tmp_path)


def test_unknown_system_lists_the_allowed_ones():
    with pytest.raises(StudyError, match="unknown system 'huge'; allowed .*desktop-hdd"):
        systems.get_system("huge")


def test_workload_arguments_default_and_check():
    smoke = workloads.get_workload("smoke")
    assert smoke.arguments() == {"read_mib": 8, "anon_mib": 16}
    assert smoke.arguments({"read_mib": 4})["read_mib"] == 4
    assert workloads.Workload.command_line({"read_mib": 4, "anon_mib": 2}) == "--read-mib=4 --anon-mib=2"
    with pytest.raises(StudyError, match="unknown parameter\\(s\\) colour .* allowed: read_mib, anon_mib"):
        smoke.arguments({"colour": 1})
    with pytest.raises(StudyError, match="read_mib = 0; allowed: an integer from 1 to 64"):
        smoke.arguments({"read_mib": 0})
    with pytest.raises(StudyError, match="read_mib = 'x'"):
        smoke.arguments({"read_mib": "x"})


def test_unknown_workload_lists_the_allowed_ones():
    with pytest.raises(StudyError, match="unknown workload 'nope'; allowed .*smoke"):
        workloads.get_workload("nope")


def test_data_file_sizes_follow_memory_and_are_page_multiples():
    data = workloads.DataFile(name="f", memory_fraction=1.5)
    assert data.size_bytes(256) == 384 << 20
    assert workloads.DataFile(name="g", mib=0.001).size_bytes(256) == 4096


def test_command_line_params_are_typed():
    assert parse_params(["a=1", "b=0.5", "c=text"]) == {"a": 1, "b": 0.5, "c": "text"}
    with pytest.raises(StudyError, match="expected NAME=VALUE"):
        parse_params(["novalue"])


def test_a_disk_calibration_is_checked_and_is_not_an_input(tmp_path):
    text = _system_toml() + ("[disk.calibration]\nrandom_4k_latency_us = 5100.0\n"
                             "sequential_mib_s = 55.0\nmeasured_with = \"gem5 24.0, timing\"\n")
    (tmp_path / "cal.toml").write_text(text)
    system = systems.get_system("cal", tmp_path)
    assert system.disk.calibration.sequential_mib_s == 55.0
    assert "disk_calibration" not in system.identity()
    (tmp_path / "bad.toml").write_text(_system_toml() + "[disk.calibration]\nspeed = 1\n")
    with pytest.raises(StudyError, match="unknown key\\(s\\) speed"):
        systems.get_system("bad", tmp_path)


@pytest.mark.parametrize("text, message", [
    (_system_toml(cpu='model = "timing"\ncolour = "red"'),
     r"bad.toml \[cpu\]: unknown key\(s\) colour; allowed: clock, cores, model"),
    (_system_toml().replace("cores = 1", "cores = true"),
     r"bad.toml \[cpu\]: cores = True; allowed: integers 1..8"),
    (_system_toml().replace("delay_us = 2000", 'delay_us = "fast"'),
     r"bad.toml \[disk\]: delay_us = 'fast'; allowed: a number"),
    (_system_toml().replace('[memory]\n', '[memory]\nchannels = 2\n'),
     r"bad.toml \[memory\]: unknown key\(s\) channels; allowed: size_mib, type"),
    (_system_toml().replace('description = "x"\n', ''), r"bad.toml: missing key\(s\) description"),
])
def test_a_profile_error_names_the_file_section_key_value_and_what_is_allowed(tmp_path, text,
                                                                             message):
    (tmp_path / "bad.toml").write_text(text)
    with pytest.raises(StudyError, match=message):
        systems.get_system("bad", tmp_path)


def test_a_profile_is_composed_of_parts_as_its_file_is():
    system = systems.get_system("desktop-hdd-128")
    assert (system.cpu.model, system.cpu.hz, system.caches.l2) == ("timing", 2_000_000_000, "1MiB")
    assert (system.memory.type, system.memory.size_mib, system.disk.timing.rpm) == \
        ("DDR3_1600", 128, 7200)
    faster = system.changed(cpu={"clock": "3GHz"})
    assert faster.cpu.hz == 3_000_000_000 and faster.cpu.model == "timing"
    assert faster.identity() != system.identity()
    with pytest.raises(StudyError, match=r"\[cpu\]: clock = '3 GHz'; expected a value like '2GHz'"):
        system.changed(cpu={"clock": "3 GHz"})


def test_allowed_values_are_the_ones_the_gem5_script_builds():
    """configs/gem5/reclaim_fs.py runs inside gem5, so it cannot import systems.py: the two
    lists are compared here."""
    import ast
    from reclaimstudy.backends.gem5.backend import CONFIG_SCRIPT
    tree = ast.parse(CONFIG_SCRIPT.read_text())
    constants = {node.targets[0].id: node.value for node in tree.body
                 if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)}
    cpu_types = {k.value for k in constants["CPU_TYPES"].keys}
    memories = {k.value for k in constants["MEMORIES"].keys}
    hierarchy = next(f for f in tree.body if isinstance(f, ast.FunctionDef)
                     and f.name == "cache_hierarchy")
    kinds = {node.comparators[0].value for node in ast.walk(hierarchy)
             if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name)
             and node.left.id == "kind"}
    assert set(systems.CPU_MODELS) == cpu_types - {"kvm"}  # KVM: the boot's CPU, not a profile's
    assert set(systems.MEMORY_TYPES) == memories
    assert set(systems.HIERARCHIES) == kinds


@pytest.mark.parametrize("entry, message", [
    ({"unit": "s", "kind": "speed", "better": "lower"}, "kind = 'speed'; allowed: time, rate"),
    ({"unit": "s", "kind": "time", "better": "up"}, "better = 'up'; allowed: lower, higher, none"),
    ({"unit": "pages", "kind": "gauge", "better": "lower"}, "a gauge \\(and only a gauge\\)"),
    ({"unit": "s", "kind": "time", "better": "none"}, "a gauge \\(and only a gauge\\)"),
    ({"unit": "s", "kind": "time"}, r"missing key\(s\) better"),
])
def test_a_metric_declaration_is_checked(entry, message):
    from reclaimstudy.config.metrics import parse_metric
    with pytest.raises(StudyError, match=message):
        parse_metric("m", entry, "meta.toml [metrics.m]")


HDD_TIMING = ('[disk.timing]\nmodel = "hdd"\ndrive = "d"\nrpm = 7200\n'
              'seek_track_to_track_ms = 1.0\nseek_average_ms = 8.5\nseek_full_stroke_ms = 15.2\n'
              'media_mb_s = 143\ninterface_mb_s = 300\nread_overhead_ms = 0.5\n'
              'write_overhead_ms = 0.015\nstroke_sectors = 0\nwrite_cache_mib = 0\n')
FLASH_TIMING = ('[disk.timing]\nmodel = "flash"\ndevice = "d"\nread_latency_us = 75\n'
                'write_latency_us = 90\nread_mb_s = 270\nwrite_mb_s = 220\ninterface_mb_s = 300\n')


def _timed_toml(timing: str) -> str:
    return _system_toml().replace("delay_us = 2000\n", "") + timing


@pytest.mark.parametrize("text, message", [
    (_timed_toml(HDD_TIMING.replace("seek_average_ms = 8.5", "seek_average_ms = 20")),
     r"seeks must grow: seek_track_to_track_ms \(1.0\) < seek_average_ms \(20.0\) < "
     r"seek_full_stroke_ms \(15.2\)"),
    (_timed_toml(HDD_TIMING.replace("rpm = 7200", "rpm = 100")),
     r"\[disk.timing.hdd\]: rpm = 100; allowed: integers 3600..15000"),
    (_timed_toml(HDD_TIMING.replace("media_mb_s = 143", "media_mb_s = 0")),
     r"media_mb_s = 0; allowed: a number > 0"),
    (_timed_toml(FLASH_TIMING + "jitter = 1.5\n"),
     r"jitter = 1.5; allowed: a number from 0 up to \(not including\) 1"),
    (_timed_toml(FLASH_TIMING.replace('model = "flash"', 'model = "tape"')),
     r"model"),
    (_system_toml() + HDD_TIMING, "give exactly one of delay_us"),
    (_timed_toml(""), "give exactly one of delay_us"),
    (_timed_toml(HDD_TIMING).replace("swap_mib = 256", 'swap_mib = 256\nswap = "file"'),
     r"swap = 'file'; allowed: device, partition, zram"),
])
def test_bad_disk_timing_is_rejected_naming_the_value(tmp_path, text, message):
    (tmp_path / "bad.toml").write_text(text)
    with pytest.raises(StudyError, match=message):
        systems.get_system("bad", tmp_path)


def test_a_disk_timing_model_is_read_with_its_kind(tmp_path):
    (tmp_path / "hdd.toml").write_text(_timed_toml(HDD_TIMING))
    (tmp_path / "ssd.toml").write_text(_timed_toml(FLASH_TIMING))
    hdd, ssd = systems.get_system("hdd", tmp_path), systems.get_system("ssd", tmp_path)
    assert isinstance(hdd.disk.timing, systems.HddTiming) and hdd.disk.delay_us is None
    assert isinstance(ssd.disk.timing, systems.FlashTiming) and ssd.disk.timing.jitter == 0.0
    assert hdd.identity()["disk"]["timing"]["seek_average_ms"] == 8.5


def test_every_toml_file_is_read_by_a_pydantic_model():
    """Each TOML file of the repository has its loader, which checks it with a model
    (pyproject.toml is Python packaging's)."""
    import subprocess

    from analysis.seeds import load_seeds
    from reclaimstudy.artefacts import image
    from reclaimstudy.campaigns.studies import load_study
    from reclaimstudy.config.policies import load_policies
    from reclaimstudy.paths import REPO
    loaders = {"configs/policies.toml": lambda p: load_policies(p),
               "configs/seeds.toml": lambda p: load_seeds(p),
               "disk-images/rootfs.toml": lambda p: image.rootfs_spec()}
    patterns = {"configs/studies/": lambda p: load_study(str(p)),
                "configs/systems/": lambda p: systems.get_system(p.stem, p.parent),
                "workloads/": lambda p: workloads.parse_workload(p.parent)}
    tracked = subprocess.run(["git", "ls-files", "*.toml"], cwd=REPO, capture_output=True,
                             text=True, check=True).stdout.split()
    unread = []
    for name in tracked:
        if name == "pyproject.toml":
            continue
        loader = loaders.get(name) or next(
            (f for prefix, f in patterns.items() if name.startswith(prefix)), None)
        if loader is None:
            unread.append(name)
        else:
            loader(REPO / name)
    assert not unread, f"TOML files no loader reads: {unread}"


def test_the_root_disks_spec_is_checked_naming_the_key(tmp_path, monkeypatch):
    from reclaimstudy.artefacts import image
    shipped = image.ROOTFS_SPEC.read_text()
    for text, message in ((shipped.replace('suite = "bookworm"\n', ""), r"missing key\(s\) suite"),
                          (shipped + 'colour = "red"\n', r"unknown key\(s\) colour; allowed: "
                                                         r"build_packages, components"),
                          (shipped.replace('variant = "minbase"', "variant = 3"),
                           r"variant = 3; allowed: text")):
        path = tmp_path / "rootfs.toml"
        path.write_text(text)
        monkeypatch.setattr(image, "ROOTFS_SPEC", path)
        with pytest.raises(StudyError, match=message):
            image.rootfs_spec()
