"""The patched kernel: series, fragment, cached build, and the knobs inside a booted guest."""

import os
from pathlib import Path

import pytest

from reclaimstudy.artefacts import kernel as k
from reclaimstudy.config import policies, systems
from reclaimstudy.errors import StudyError
from reclaimstudy.util import hostdeps
from tests.guestkit import boot_to_done, busybox_image, static_binary

GUEST = Path(__file__).parent / "guest"
# What the guest must read back: the defaults reclaimstudy/config/policies.py assumes.
KNOBS = {name: str(default) for name, (_, _, default) in policies.KNOBS.items()}


def test_series_names_existing_patches_and_the_source_version():
    series = k.read_series()
    assert series.package == "linux-source-6.1"
    # the bootstrap installs the version the series names (tested here, on a set-up machine)
    assert series.version == hostdeps.debian_package_version("linux-source-6.1")
    assert [p.name[:4] for p in series.patches] == ["0001", "0002", "0003", "0004", "0005", "0006"]


def test_series_with_a_missing_patch_is_rejected(tmp_path):
    (tmp_path / "series").write_text("# made-against: linux-source-6.1 6.1.1-1\nnope.patch\n")
    with pytest.raises(StudyError, match="nope.patch"):
        k.read_series(tmp_path / "series")


def test_unmet_options_reports_what_kconfig_dropped(tmp_path):
    (tmp_path / "frag").write_text("CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=8\n")
    (tmp_path / "config").write_text("CONFIG_A=y\nCONFIG_B=y\n# CONFIG_C is not set\n")
    unmet = k.unmet_options(k.read_kconfig(tmp_path / "frag"), k.read_kconfig(tmp_path / "config"))
    assert unmet == ["CONFIG_B: wanted not set, got y", "CONFIG_C: wanted 8, got not set"]


def test_patch_failure_names_installed_and_expected_versions(tmp_path):
    (tmp_path / "mm").mkdir()
    (tmp_path / "mm/madvise.c").write_text("nothing the patch expects\n")
    series = k.Series("linux-source-6.1", "6.1.176-1",
                      (k.KERNEL_PATCHES / "0005-madv-free.patch",))
    with pytest.raises(StudyError) as error:
        k.apply_series(tmp_path, series, installed_version="6.1.999-1")
    assert "0005-madv-free.patch" in str(error.value)
    assert "6.1.999-1" in str(error.value) and "6.1.176-1" in str(error.value)


@pytest.mark.slow
def test_series_applies_cleanly_to_the_debian_source(tmp_path):
    series = k.read_series()
    source = k.extract_source(tmp_path, members=k.patched_files(series))
    k.apply_series(source, series, k.installed_source_version())
    assert "sysctl_madv_free" in (source / "mm/madvise.c").read_text()
    assert (source / "mm/reclaim_knobs.c").is_file()


@pytest.mark.slow
def test_built_config_has_every_fragment_option(kernel):
    assert k.unmet_options(k.read_kconfig(k.FRAGMENT), k.read_kconfig(kernel.config)) == []
    manifest = kernel.manifest
    assert manifest["source_version"] == k.installed_source_version()
    assert [p["name"] for p in manifest["patches"]] == [p.name for p in k.read_series().patches]
    assert kernel.vmlinux.read_bytes()[:4] == b"\x7fELF"


def zram_options() -> list[str]:
    """What a zram profile needs built in: the device, its allocator, the crypto API it
    compresses through, and the option of each compressor a profile may name."""
    return sorted({"CONFIG_BLK_DEV", "CONFIG_ZRAM", "CONFIG_ZSMALLOC", "CONFIG_CRYPTO",
                   *systems.ZRAM_COMPRESSORS.values()})


def test_the_fragment_builds_zram_and_every_compressor_a_profile_may_name():
    fragment = k.read_kconfig(k.FRAGMENT)
    assert {option: fragment.get(option) for option in zram_options()} == \
        {option: "y" for option in zram_options()}
    assert fragment["CONFIG_ZRAM_DEF_COMP"] == '"lzo-rle"'


@pytest.mark.slow
def test_the_built_kernel_has_zram_and_every_compressor_a_profile_may_name(kernel):
    config = k.read_kconfig(kernel.config)
    assert {option: config.get(option) for option in zram_options()} == \
        {option: "y" for option in zram_options()}
    assert config["CONFIG_ZRAM_DEF_COMP"] == '"lzo-rle"'


# What an NVMe profile ([disk.timing] interface = "nvme") needs built in: the PCI NVMe
# driver (root is on the namespace, and there is no initrd) and the core it selects.
NVME_OPTIONS = ["CONFIG_BLK_DEV_NVME", "CONFIG_NVME_CORE"]


def test_the_fragment_builds_the_nvme_driver_in():
    fragment = k.read_kconfig(k.FRAGMENT)
    assert {option: fragment.get(option) for option in NVME_OPTIONS} == \
        {option: "y" for option in NVME_OPTIONS}


@pytest.mark.slow
def test_the_built_kernel_has_the_nvme_driver_built_in(kernel):
    config = k.read_kconfig(kernel.config)
    assert {option: config.get(option) for option in NVME_OPTIONS} == \
        {option: "y" for option in NVME_OPTIONS}


@pytest.mark.slow
def test_unchanged_kernel_is_not_rebuilt(kernel):
    stamp = (kernel.directory / "manifest.json").stat().st_mtime
    again = k.build_kernel()
    assert again.directory == kernel.directory
    assert (again.directory / "manifest.json").stat().st_mtime == stamp  # nothing rebuilt


@pytest.fixture(scope="module")
def knob_guest(kernel, tmp_path_factory):
    """Boot the kernel once with the knob checks as /init; return the parsed @@ lines."""
    work = tmp_path_factory.mktemp("knobs")
    madvfree = static_binary(GUEST / "madvfree.c", work / "madvfree")
    image = busybox_image(work, GUEST / "knobs_init.sh", {
        "/bin/madvfree": madvfree,
        "/data/file3": os.urandom(8 << 20),
        "/data/file2": os.urandom(8 << 20),
    })
    return boot_to_done(kernel.bzimage, image, memory_mib=256, timeout_s=300)


@pytest.mark.slow
def test_every_knob_reads_its_default(knob_guest):
    defaults = {name: value for tag, name, value in
                (line for line in knob_guest if line[0] == "default")}
    assert defaults == KNOBS


@pytest.mark.slow
def test_valid_writes_stick_and_invalid_ones_fail_leaving_the_value(knob_guest):
    valid = [line[1:] for line in knob_guest if line[0] == "valid"]
    invalid = [line[1:] for line in knob_guest if line[0] == "invalid"]
    assert len(valid) == 2 * len(KNOBS) and len(invalid) == 2 * len(KNOBS)
    maxima = {name: str(high) for name, (_, high, _) in policies.KNOBS.items()}
    assert {(name, value) for name, value, _, _ in valid if value != "0"} == set(maxima.items())
    for name, value, status, readback in valid:
        assert status == "0" and readback == value, (name, value)
    for name, value, status, readback in invalid:
        assert value in ("-1", str(int(maxima[name]) + 1))
        # the previous valid write (0) must still be there
        assert status != "0" and readback == "0", (name, value, readback)


@pytest.mark.slow
def test_mglru_is_off_at_boot_and_switches(knob_guest):
    states = {line[1]: int(line[2], 16) for line in knob_guest if line[0] == "lru_gen"}
    assert states["boot"] == 0 and states["on"] != 0 and states["off"] == 0


@pytest.mark.slow
def test_madv_free_knob_decides_whether_pages_are_lazily_freed(knob_guest):
    lazy = {line[1]: (line[2], int(line[3])) for line in knob_guest if line[0] == "lazyfree"}
    assert lazy["1"][0] == "0" and lazy["0"][0] == "0"  # the helper itself succeeded
    assert lazy["1"][1] >= 1024 * 0.9  # up to one per-CPU batch may not be drained yet
    assert lazy["0"][1] == 0


@pytest.mark.slow
def test_use_once_bit0_decides_when_read_pages_are_activated(knob_guest):
    pages = (8 << 20) // 4096
    deltas = {line[1]: (int(line[2]), int(line[3])) for line in knob_guest if line[0] == "useonce"}
    first, second = deltas["3"]  # use-once on: first read stays inactive, second activates
    assert first < 0.1 * pages and second > 0.8 * pages
    first, second = deltas["2"]  # bit 0 off: the first read activates
    assert first > 0.8 * pages


MIB = 1 << 20


@pytest.fixture(scope="module")
def reclaim_guest(kernel, tmp_path_factory):
    """Boot a 96 MiB guest with no swap whose /init drives reclaim under each knob
    setting (tests/guest/reclaim_init.sh); return the parsed @@ lines."""
    work = tmp_path_factory.mktemp("reclaim")
    exectouch = static_binary(GUEST / "exectouch.c", work / "exectouch")
    image = busybox_image(work, GUEST / "reclaim_init.sh", {
        "/bin/exectouch": exectouch,
        "/data/exec": os.urandom(12 * MIB),
        "/data/a": os.urandom(30 * MIB),
        "/data/b": os.urandom(30 * MIB),
        "/data/stream": os.urandom(60 * MIB),
    }, size_mib=200)
    return boot_to_done(kernel.bzimage, image, memory_mib=96, timeout_s=900)


def _by_setting(lines, tag):
    return {line[1]: [int(word) for word in line[2:]] for line in lines if line[0] == tag}


@pytest.mark.slow
def test_exec_protect_first_use_bit_alone_activates_exec_pages_used_once(reclaim_guest):
    activated = _by_setting(reclaim_guest, "firstuse")  # setting -> [pgactivate, pgscan]
    pages = 12 * MIB // 4096
    assert all(scanned > pages for _, scanned in activated.values()), activated  # reclaim ran
    for with_bit, without_bit in (("3", "1"), ("2", "0")):  # bit 1 on / off, bit 0 the same
        assert activated[with_bit][0] > 0.8 * pages, activated
        assert activated[without_bit][0] < 0.2 * pages, activated


@pytest.mark.slow
def test_exec_protect_active_bit_alone_rotates_referenced_exec_pages(reclaim_guest):
    assert ["tracing", "yes"] in reclaim_guest
    rotated = _by_setting(reclaim_guest, "rotated")  # setting -> [nr_referenced, active scans]
    assert all(scans > 0 for _, scans in rotated.values()), rotated
    for with_bit, without_bit in (("3", "2"), ("1", "0")):  # bit 0 on / off, bit 1 the same
        assert rotated[with_bit][0] > 0, rotated
        assert rotated[without_bit][0] == 0, rotated


@pytest.mark.slow
def test_refault_scan_anon_off_leaves_refault_deactivation_working(reclaim_guest):
    moved = _by_setting(reclaim_guest, "refaultdeact")  # setting -> [pgdeactivate, refaults]
    pages = 30 * MIB // 4096
    for setting in ("1", "0"):
        deactivated, refaults = moved[setting]
        assert refaults > pages, moved  # the 60 MiB file's activating refaults
        assert deactivated > 0.5 * pages, moved


def test_another_installed_source_version_is_refused_naming_both(monkeypatch):
    """An `apt upgrade` replaces the pinned source: a new kernel key would quietly start
    every study over under new run ids."""
    series = k.read_series()
    monkeypatch.setattr(hostdeps, "debian_package_version", lambda package: "6.1.999-9")
    monkeypatch.setattr(k, "installed_source_version", lambda: "6.1.999-9")
    with pytest.raises(StudyError) as error:
        k.kernel_inputs()
    said = str(error.value)
    assert "linux-source-6.1 6.1.999-9 is installed" in said
    assert f"made against {series.version}" in said
    assert f"apt-get install --allow-downgrades linux-source-6.1={series.version}" in said
