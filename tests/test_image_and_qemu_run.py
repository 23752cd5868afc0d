"""The guest disks and a whole job under QEMU: policy read back, phases, records, run.json."""

import importlib.metadata
import json
import re
import subprocess
from pathlib import Path

import pytest

from reclaimstudy.artefacts import kernel as k
from reclaimstudy.artefacts.image import build_image
from reclaimstudy.backends.qemu.backend import QemuBackend
from reclaimstudy.campaigns import runs
from reclaimstudy.config.policies import KNOBS, get_policy
from reclaimstudy.config.systems import get_system
from reclaimstudy.config.workloads import get_workload
from reclaimstudy.errors import StudyError
from reclaimstudy.hashing import json_sha256
from reclaimstudy.results.record import PARTIAL
from reclaimstudy.util import hostdeps

pytestmark = pytest.mark.slow


def debugfs(image, command):
    return subprocess.run(["debugfs", "-R", command, str(image)], capture_output=True,
                          text=True, check=True).stdout


@pytest.fixture(scope="module")
def tiny_image():
    return build_image(get_system("ci-tiny"))


def test_the_root_file_system_needs_no_lazy_init_in_the_guest(tiny_image):
    """Every block group's inode table is zeroed already (else the guest's ext4lazyinit
    writes them in the background of every run)."""
    groups = [line for line in subprocess.run(
        ["dumpe2fs", str(tiny_image.root)], capture_output=True, text=True,
        check=True).stdout.splitlines() if re.match(r"Group \d+:", line)]
    assert groups and all("ITABLE_ZEROED" in line for line in groups), groups[:3]


def test_image_holds_the_runtime_tools_workloads_and_sized_data(tiny_image):
    listing = debugfs(tiny_image.root, "ls -l /usr/lib/reclaim/bin")
    assert " m5" in listing and " guestctl" in listing
    assert "runjob" in debugfs(tiny_image.root, "ls /usr/lib/reclaim")
    assert "run" in debugfs(tiny_image.root, "ls /usr/lib/reclaim/workloads/smoke")
    stat = debugfs(tiny_image.root, "stat /usr/share/reclaim/data/smoke/smoke.bin")
    assert "Size: 67108864" in stat
    assert "fio" in debugfs(tiny_image.root, "ls /usr/bin")
    manifest = tiny_image.manifest
    assert manifest["swap_mib"] == 256 and "fio" in manifest["rootfs_packages"]
    assert "libc6-dev" in manifest["sysroot_packages"]
    with open(tiny_image.swap, "rb") as swap:
        swap.seek(4096 - 10)
        assert swap.read(10) == b"SWAPSPACE2"


def test_an_unchanged_image_is_reused(tiny_image):
    again = build_image(get_system("ci-tiny"))
    assert again.directory == tiny_image.directory
    assert again.manifest["built_at"] == tiny_image.manifest["built_at"]


def test_the_userland_comes_from_the_frozen_main_suite_alone(tiny_image):
    """Not bookworm-updates or -security (mmdebstrap's default), whose packages change
    weekly: the image would differ on every machine that builds it another day."""
    from reclaimstudy.artefacts.image import rootfs_tarball
    tarball, _ = rootfs_tarball()
    sources = subprocess.run(["tar", "-xOf", str(tarball), "./etc/apt/sources.list"],
                             capture_output=True, text=True, check=True).stdout
    assert re.fullmatch(r"deb \S+ bookworm main", sources.strip()), sources  # one line


def test_guest_programs_link_the_sysroots_c_library_not_the_machines(tmp_path):
    """--sysroot alone moves the headers only: gcc still took the machine's crt1.o and
    libc.a, which follow its security updates."""
    from reclaimstudy.artefacts.image import guest_compiler, guest_sysroot
    sysroot, manifest = guest_sysroot()
    assert manifest["packages"]["libc6-dev"] and manifest["packages"]["linux-libc-dev"]
    assert manifest["packages"]["libcrypt1"].startswith("1:")  # apt's file name says 1%3a
    (tmp_path / "t.c").write_text("int main(void) { return 0; }\n")
    linked = subprocess.run(
        guest_compiler(sysroot).split() + ["-static", "-o", str(tmp_path / "t"),
                                           str(tmp_path / "t.c"), "-Wl,--trace"],
        capture_output=True, text=True, check=True).stdout.split()
    c_library = [path for path in linked if path.endswith(("/crt1.o", "/libc.a"))]
    assert c_library and all(path.startswith(f"{sysroot}/") for path in c_library), c_library


def test_a_missing_kernel_source_names_the_package(monkeypatch, tmp_path):
    monkeypatch.setattr(k, "SOURCE_TARBALL", tmp_path / "nope.tar.xz")
    with pytest.raises(StudyError, match="apt-get install linux-source-6.1"):
        k.build_kernel()


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    workload = get_workload("smoke")
    spec = runs.RunSpec(study="test-qemu", system=get_system("ci-tiny"),
                        policy=get_policy("madv-free-off"), workload=workload,
                        arguments=workload.arguments({"read_mib": 4}), repetition=0,
                        backend="qemu")
    results = tmp_path_factory.mktemp("results")
    record = runs.execute(spec, QemuBackend(), results=results, timeout_s=300)
    return record, results / "test-qemu" / record["run_id"]


def test_qemu_run_completes_with_policy_readback_and_phase_vmstat(smoke_run):
    record, directory = smoke_run
    assert record["status"] == "ok", record["reason"]
    events = [json.loads(line) for line in (directory / "events.jsonl").read_text().splitlines()]
    policy = next(e for e in events if e["event"] == "policy")
    assert policy["name"] == "madv-free-off"
    assert policy["readback"]["madv_free"] == 0 and policy["readback"]["use_once"] == 3
    assert set(policy["readback"]) == set(KNOBS) | {"swappiness", "lru_gen"}  # every knob
    phases = [e for e in events if e["event"] == "phase"]
    assert [p["name"] for p in phases] == ["read", "anon"]
    assert all(p["vmstat"]["pgpgin"] >= 0 and "psi" in p for p in phases)
    reads = [e for e in events if e.get("kind") == "read"]
    assert reads[0]["mib"] == 4


def test_run_json_records_every_input_with_hashes(smoke_run):
    record, directory = smoke_run
    on_disk = json.loads((directory / "run.json").read_text())
    assert on_disk == record
    assert record["artefacts"]["kernel"]["key"] and record["artefacts"]["image"]["root_sha256"]
    # every Debian package behind the guest: its userland's and its programs' C library's
    assert "libjemalloc2" in record["artefacts"]["image"]["rootfs_packages"]
    assert "libc6-dev" in record["artefacts"]["image"]["sysroot_packages"]
    assert record["artefacts"]["qemu"]["accel"] in ("kvm", "tcg")
    identity = record["identity"]
    assert identity["system"]["memory"]["size_mib"] == 128
    assert identity["workload"] == {"name": "smoke", "arguments": {"read_mib": 4, "anon_mib": 16}}
    assert identity["policy"]["knobs"]["madv_free"] == 0
    assert identity["artefacts"] == {"kernel": record["artefacts"]["kernel"]["key"],
                                     "image": record["artefacts"]["image"]["key"]}
    assert record["run_id"].endswith(json_sha256(identity)[:10])
    # The same artefact keys come from the inputs alone (a cluster submission names its
    # runs before anything is built).
    spec = runs.RunSpec(study="test-qemu", system=get_system("ci-tiny"),
                        policy=get_policy("madv-free-off"), workload=get_workload("smoke"),
                        arguments=identity["workload"]["arguments"], repetition=0,
                        backend="qemu")
    assert QemuBackend().identity(spec) == identity["artefacts"]
    assert runs.run_id(spec, QemuBackend().identity(spec)) == record["run_id"]
    # ... and what produced it: the Python and Debian package versions of the host.
    host = record["host"]
    assert host["cpu_model"] == runs.cpu_model() != "unknown"
    assert host["python_packages"]["pandas"] == importlib.metadata.version("pandas")
    assert host["debian_packages"]["qemu-system-x86"] == \
        hostdeps.debian_package_version("qemu-system-x86")
    assert set(host["debian_packages"]) == set(hostdeps.debian_packages())
    assert (directory / "job.sh").read_text().count("WORKLOAD='smoke'") + \
        (directory / "job.sh").read_text().count("WORKLOAD=smoke") == 1
    assert not list((directory.parent / PARTIAL).glob("*")), "partial left behind"


def test_a_run_that_times_out_is_published_as_failed_with_the_reason(tmp_path):
    workload = get_workload("smoke")
    spec = runs.RunSpec(study="t", system=get_system("ci-tiny"), policy=get_policy("baseline"),
                        workload=workload, arguments=workload.arguments(), repetition=7,
                        backend="qemu")
    record = runs.execute(spec, QemuBackend(), results=tmp_path, timeout_s=1.0)
    assert record["status"] == "failed" and record["reason"] == "time-out after 1 s"
    assert (tmp_path / "t" / record["run_id"] / "console.log").is_file()


def test_a_boot_killed_before_qemu_opens_its_console_still_leaves_one(tmp_path):
    # On a slow host a short time-out can kill QEMU before it opens the serial file; the
    # run's directory must still hold a console.log (empty) for its record to point at.
    from reclaimstudy.backends.qemu import boot as qemu
    bzimage = tmp_path / "bzImage"
    bzimage.write_bytes(b"not a kernel")
    boot = qemu.Boot(bzimage=bzimage, cmdline="", memory_mib=64, disks=[],
                     console_log=tmp_path / "run" / "console.log", timeout_s=0.0)
    result = qemu.run(boot, accel="tcg")
    assert result.timed_out and result.exit_code is None
    assert boot.console_log.is_file()


def _cached_images(folder: Path, count: int) -> None:
    """`count` image folders img0, img1, ..., each used later than the one before."""
    import os
    import time
    for number in range(count):
        directory = folder / f"img{number}"
        directory.mkdir()
        (directory / "manifest.json").write_text("{}")
        stamp = time.time() - 1000 + number
        os.utime(directory / "manifest.json", (stamp, stamp))


def test_old_images_are_pruned_newest_kept(tmp_path):
    from reclaimstudy.artefacts.image import prune_images
    _cached_images(tmp_path, 5)
    removed = prune_images(tmp_path, keep=2)
    assert sorted(p.name for p in removed) == ["img0", "img1", "img2"]
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == ["img3", "img4"]


def test_an_image_a_run_holds_is_not_pruned(tmp_path):
    """A gem5 run opens its disks again at every segment's restore: an image pruned
    under it (a newer image built meanwhile, by any process sharing the cache) failed
    its next segment. One a run holds (Image.in_use: a shared flock, which another open
    of the file sees even in this process) is kept; once let go it is pruned."""
    from reclaimstudy.artefacts.image import Image, prune_images
    _cached_images(tmp_path, 3)
    with Image(tmp_path / "img0").in_use():
        assert [p.name for p in prune_images(tmp_path, keep=1)] == ["img1"]
        assert (tmp_path / "img0" / "manifest.json").is_file()
    assert [p.name for p in prune_images(tmp_path, keep=1)] == ["img0"]
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == ["img2"]


def test_a_partitioned_disk_holds_root_then_swap_on_one_spindle(tiny_image):
    disk = tiny_image.disks("partition")[0]
    assert tiny_image.disks("device") == [tiny_image.root, tiny_image.swap]
    table = json.loads(subprocess.run(["sfdisk", "--json", str(disk)], capture_output=True,
                                      text=True, check=True).stdout)["partitiontable"]
    root, swap = table["partitions"]
    assert (root["type"], swap["type"]) == ("83", "82")
    assert root["start"] == 2048 and root["size"] * 512 == tiny_image.root.stat().st_size
    assert swap["start"] >= root["start"] + root["size"] and swap["start"] % 2048 == 0
    assert swap["size"] * 512 == tiny_image.swap.stat().st_size
    with open(disk, "rb") as handle, open(tiny_image.root, "rb") as original:
        handle.seek(root["start"] * 512 + 1024)  # the ext4 superblock, copied in place
        original.seek(1024)
        assert handle.read(1024) == original.read(1024)
        handle.seek(swap["start"] * 512 + 4096 - 10)
        assert handle.read(10) == b"SWAPSPACE2"
    assert tiny_image.disks("partition") == [disk]  # made once, then reused
    with pytest.raises(StudyError,
                       match="unknown swap layout 'file': allowed: device, partition, zram"):
        tiny_image.disks("file")


def test_the_guest_boots_from_a_partition_and_swaps_to_the_next_one(tmp_path):
    workload = get_workload("smoke")
    system = get_system("ci-tiny").changed(name="ci-tiny-one-disk", disk={"swap": "partition"})
    spec = runs.RunSpec(study="test-qemu", system=system, policy=get_policy("baseline"),
                        workload=workload, arguments=workload.arguments({"read_mib": 4}),
                        repetition=0, backend="qemu")
    record = runs.execute(spec, QemuBackend(), results=tmp_path, timeout_s=300)
    assert record["status"] == "ok", record["reason"]
    directory = tmp_path / "test-qemu" / record["run_id"]
    command = json.loads((directory / "run.json").read_text())["backend_info"]["command"]
    assert command.count("-drive") == 1 and "reclaim.swap=/dev/sda2" in " ".join(command)
    start = next(json.loads(line) for line in (directory / "events.jsonl").read_text().splitlines()
                 if '"job_start"' in line)
    assert start["swaptotal_kib"] == system.disk.swap_mib * 1024 - 4
    # The kernel picks mq-deadline for the one-command-at-a-time IDE disk (guest.config).
    assert start["io_schedulers"]["sda"] == "[mq-deadline] none"
    # QEMU's IDE disk reports no rotation rate, so the guest takes it as rotating, and its
    # swap is not solid state (no "SS").
    assert start["rotational"]["sda"] == 1, start
    assert set(start["swap_flags"]) == {"/dev/sda2"}, start
    assert not start["swap_flags"]["/dev/sda2"].startswith("SS"), start


# What the guest shows of its swap before the workload (the run's --job-extra).
def _filled_on_qemu(system_name: str, show: str, tmp_path: Path) -> Path:
    """The run folder of a QEMU job on `system_name` that fills memory 1.5 times over
    (thrash, one round), `show` run before it."""
    workload = get_workload("thrash")
    spec = runs.RunSpec(study="test-qemu", system=get_system(system_name),
                        policy=get_policy("baseline"), workload=workload,
                        arguments=workload.arguments({"anon_fraction": 1.5, "rounds": 1}),
                        repetition=0, backend="qemu", job_extra=show)
    record = runs.execute(spec, QemuBackend(), results=tmp_path, timeout_s=600)
    assert record["status"] == "ok", record["reason"]
    return tmp_path / "test-qemu" / record["run_id"]


SHOW_ZRAM = """
sed 's/^/zram-check: swaps /' /proc/swaps
echo "zram-check: comp_algorithm $(cat /sys/block/zram0/comp_algorithm)"
"""


def test_the_guest_swaps_to_zram_of_the_profiles_size_compressor_and_priority(tmp_path):
    """desktop-zram-64: root on the one disk, swap on zram set up at boot, and a job that
    fills memory 1.5 times over leaves compressed pages there."""
    directory = _filled_on_qemu("desktop-zram-64", SHOW_ZRAM, tmp_path)
    command = " ".join(json.loads((directory / "run.json").read_text())["backend_info"]
                       ["command"])
    assert command.count("-drive") == 1 and "root=/dev/sda " in command
    assert "reclaim.swap=/dev/zram0 reclaim.zram=128,lzo-rle" in command
    shown = [line.rstrip("\r").split()[1:] for line in
             (directory / "console.log").read_text(errors="replace").splitlines()
             if line.startswith("zram-check: ")]
    swaps = [words[1:] for words in shown if words[0] == "swaps"]
    assert [words[0] for words in swaps[1:]] == ["/dev/zram0"], swaps  # the only swap
    name, kind, size, _used, priority = swaps[1]
    assert (kind, int(size), int(priority)) == ("partition", 128 * 1024 - 4, 100)
    assert [words[1:] for words in shown if words[0] == "comp_algorithm"] == \
        [["lzo", "[lzo-rle]", "lz4", "zstd"]]
    events = [json.loads(line) for line in (directory / "events.jsonl").read_text().splitlines()]
    start = next(e for e in events if e["event"] == "job_start")
    assert start["swaptotal_kib"] == 128 * 1024 - 4
    fill = next(e for e in events if e["event"] == "phase" and e["name"] == "fill")
    access = next(e for e in events if e["event"] == "phase" and e["name"] == "access")
    assert access["vmstat"]["pswpout"] - fill["vmstat"]["pswpout"] > 0
    # After the workload (its own pages freed): what is left in zram, and the peak.
    zram = next(e for e in events if e["event"] == "zram")
    assert (zram["comp_algorithm"].split(), zram["disksize"], zram["priority"]) == \
        (["lzo", "[lzo-rle]", "lz4", "zstd"], 128 << 20, 100)  # the kernel ends it with " "
    stats = zram["mm_stat"]
    assert stats["orig_data_size"] > stats["compr_data_size"] > 0, stats
    assert stats["mem_used_max"] > stats["mem_used_total"], stats
    print(f"zram: {swaps[1]}; {zram}")


# What the guest shows of its NVMe drive before the workload (the run's --job-extra): the
# driver bound to the namespace's PCI function, the device of the root mount and of the
# first partition (major:minor), the namespace's rotational flag, its swap.
SHOW_NVME = r"""
echo "nvme-check: driver $(basename "$(readlink -f /sys/block/nvme0n1/device/device/driver)")"
echo "nvme-check: root $(awk '$5 == "/" { print $3; exit }' /proc/self/mountinfo)"
echo "nvme-check: p1 $(cat /sys/class/block/nvme0n1p1/dev)"
echo "nvme-check: rotational $(cat /sys/block/nvme0n1/queue/rotational)"
sed 's/^/nvme-check: swaps /' /proc/swaps
dmesg | grep 'swap on' | sed 's/^/nvme-check: kernel /'
"""


def test_the_guest_roots_and_swaps_on_the_nvme_namespace(tmp_path):
    """desktop-nvme-ssd-64 under QEMU's nvme device: Linux's nvme driver binds it, root is
    the namespace's first partition and swap its second, the namespace is solid state,
    and a job that fills memory 1.5 times over swaps to it."""
    system = get_system("desktop-nvme-ssd-64")
    directory = _filled_on_qemu(system.name, SHOW_NVME, tmp_path)
    command = json.loads((directory / "run.json").read_text())["backend_info"]["command"]
    assert command.count("-drive") == 1 and "nvme,drive=nvme0,serial=reclaimstudy0" in command
    line = " ".join(command)
    assert "root=/dev/nvme0n1p1 " in line and "reclaim.swap=/dev/nvme0n1p2 " in line
    shown: dict[str, list[str]] = {}
    for text in (directory / "console.log").read_text(errors="replace").splitlines():
        if text.startswith("nvme-check: "):
            kind, _, rest = text.rstrip("\r")[len("nvme-check: "):].partition(" ")
            shown.setdefault(kind, []).append(rest)
    assert shown["driver"] == ["nvme"], shown
    assert shown["root"] == shown["p1"] and len(shown["root"]) == 1, shown
    assert shown["rotational"] == ["0"], shown
    swaps = [words.split() for words in shown["swaps"][1:]]
    assert [words[0] for words in swaps] == ["/dev/nvme0n1p2"], shown  # the only swap
    assert int(swaps[0][2]) == system.disk.swap_mib * 1024 - 4, shown
    [added] = shown["kernel"]
    assert re.search(r"swap on /dev/nvme0n1p2\. .* across:\d+k SS", added), added
    events = [json.loads(line) for line in (directory / "events.jsonl").read_text().splitlines()]
    start = next(e for e in events if e["event"] == "job_start")
    assert start["swaptotal_kib"] == system.disk.swap_mib * 1024 - 4
    # Every run's record says what the drive is to the guest, as the check above shows.
    assert start["rotational"]["nvme0n1"] == 0, start
    assert start["swap_flags"] == {"/dev/nvme0n1p2": added.split()[-1]}, (start, added)
    assert start["swap_flags"]["/dev/nvme0n1p2"].startswith("SS")
    fill = next(e for e in events if e["event"] == "phase" and e["name"] == "fill")
    access = next(e for e in events if e["event"] == "phase" and e["name"] == "access")
    assert access["vmstat"]["pswpout"] - fill["vmstat"]["pswpout"] > 0
    # The repetition's perturbation reads from the root's own device, here the namespace.
    perturbed = next(e for e in events if e.get("kind") == "perturb")
    assert perturbed["device"] == "nvme0n1p1" and perturbed["file_kib"] > 0, perturbed
    print(f"nvme: {shown}; io_schedulers {start['io_schedulers']}; pswpout "
          f"{access['vmstat']['pswpout'] - fill['vmstat']['pswpout']}")


def test_a_repetitions_seed_perturbs_the_guest_and_the_same_seed_the_same_way(tmp_path):
    workload = get_workload("smoke")

    def perturbation(repetition, where):
        spec = runs.RunSpec(study="test-qemu", system=get_system("ci-tiny"),
                            policy=get_policy("baseline"), workload=workload,
                            arguments=workload.arguments({"read_mib": 4}),
                            repetition=repetition, backend="qemu")
        record = runs.execute(spec, QemuBackend(), results=tmp_path / where, timeout_s=300)
        assert record["status"] == "ok", record["reason"]
        events = [json.loads(line) for line in
                  (tmp_path / where / "test-qemu" / record["run_id"] / "events.jsonl")
                  .read_text().splitlines()]
        done = next(e for e in events if e.get("kind") == "perturb")
        first_phase = next(e for e in events if e["event"] == "phase")
        return done, first_phase["vmstat"]
    first, first_vm = perturbation(0, "a")
    again, _ = perturbation(0, "b")
    other, other_vm = perturbation(1, "c")
    memory_kib = get_system("ci-tiny").memory_mib * 1024
    assert first == again and first["seed"] == 1 and other["seed"] == 2
    assert (first["delay_ms"], first["anon_kib"]) != (other["delay_ms"], other["anon_kib"])
    for done in (first, other):
        assert done["device"] == "sda", done  # ci-tiny's root is the whole disk
        assert 0 <= done["delay_ms"] <= 50
        assert 0 < done["file_kib"] <= 0.02 * memory_kib and 0 < done["anon_kib"] <= 0.02 * memory_kib
    # The held memory is still held when the workload starts.
    assert abs((other_vm["nr_anon_pages"] - first_vm["nr_anon_pages"]) * 4
               - (other["anon_kib"] - first["anon_kib"])) < 0.2 * memory_kib * 0.02


TRACE = Path(__file__).resolve().parents[1] / "analysis" / "traces" / "swap-write-requests.sh"


def _smoke_start(job_extra: str, tmp_path: Path, where: str) -> tuple[dict, dict]:
    """The run record and job_start event of ci-tiny's smoke job (repetition 0), with
    `job_extra` run before it."""
    workload = get_workload("smoke")
    spec = runs.RunSpec(study="test-qemu", system=get_system("ci-tiny"),
                        policy=get_policy("baseline"), workload=workload,
                        arguments=workload.arguments({"read_mib": 4}), repetition=0,
                        backend="qemu", job_extra=job_extra)
    record = runs.execute(spec, QemuBackend(), results=tmp_path / where, timeout_s=300)
    events = tmp_path / where / "test-qemu" / record["run_id"] / "events.jsonl"
    start = next((json.loads(line) for line in events.read_text().splitlines()
                  if '"job_start"' in line), {}) if events.exists() else {}
    return record, start


def test_a_traced_run_has_the_memory_of_an_untraced_one(tmp_path):
    """runjob sizes the trace buffer in every run before a trace is read, so a trace
    (here the swap-write one, the largest) takes no memory an untraced run keeps: free
    memory at the job's start agrees within what two boots differ by (before, the trace's
    own 2 MiB buffer came out of the traced run alone). A trace that resizes the buffer
    is refused."""
    plain, plain_start = _smoke_start("", tmp_path, "plain")
    traced, traced_start = _smoke_start(TRACE.read_text(), tmp_path, "traced")
    assert plain["status"] == traced["status"] == "ok", (plain["reason"], traced["reason"])
    # 2 MiB asked, as the kernel rounds it to its pages
    assert plain_start["trace_buffer_kib"] == traced_start["trace_buffer_kib"] == 2051
    gap = plain_start["memfree_kib"] - traced_start["memfree_kib"]
    print(f"MemFree at the job's start: untraced {plain_start['memfree_kib']} KiB, "
          f"traced {traced_start['memfree_kib']} KiB")
    assert abs(gap) < 512, gap  # a quarter of the buffer the trace used to add
    resized, _ = _smoke_start("echo 4096 > /sys/kernel/tracing/buffer_size_kb\n",
                              tmp_path, "resized")
    assert resized["status"] != "ok"
    assert "not the 2051 every run has: a trace must not resize it" in resized["reason"], \
        resized["reason"]


def test_disk_calib_swaps_out_and_back_in_and_reads_its_data_back(tmp_path):
    """disk-calib's last two phases on the NVMe profile under QEMU (its swap on the
    namespace's second partition): the pages it pages out come back in random order,
    each a major fault or brought in by readahead with one, and each reads back what was
    written (the workload fails the run otherwise); the swap-in's cost per fault is what
    a report sets beside a file refault's."""
    from analysis.records import read_events, workload_metrics
    workload = get_workload("disk-calib")
    spec = runs.RunSpec(study="test-qemu", system=get_system("desktop-nvme-ssd-64"),
                        policy=get_policy("baseline"), workload=workload,
                        arguments=workload.arguments({"random_reads": 20, "seq_mib": 1,
                                                      "random_writes": 5, "seq_write_mib": 1,
                                                      "swap_out_mib": 8}),
                        repetition=0, backend="qemu")
    record = runs.execute(spec, QemuBackend(), results=tmp_path, timeout_s=600)
    assert record["status"] == "ok", record["reason"]
    events = read_events(tmp_path / "test-qemu" / record["run_id"])
    values = {m.metric: m.value for m in workload_metrics("disk-calib", events)}
    print({k: v for k, v in values.items() if k.startswith("swap")})
    assert values["swapped_out_mib"] > 6 and values["swapped_in_mib"] > 6, values
    assert 0 < values["swap_in_faults"] <= 8 * 256, values
    assert values["swap_in_s_per_fault"] > 0 and values["swap_in_s_per_page"] > 0
