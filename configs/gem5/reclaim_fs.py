"""gem5 full-system configuration of the reclaim study, on the gem5 standard library.

Run by the user's gem5 binary, never by the host's Python:
    $GEM5 --outdir=OUT configs/gem5/reclaim_fs.py PARAMS.json
PARAMS.json is written by the study tool (reclaimstudy/gem5_backend.py). Only the
Python standard library and gem5's own modules are imported here.

Two modes:
  boot  boot the kernel on a KVM or atomic CPU with no caches, save a checkpoint when
        the guest's /init asks for one (`m5 checkpoint`, before it reads a job), stop.
  run   restore that checkpoint onto the system profile's CPU, caches, DRAM and disk
        latency, hand the job to the guest through readfile, simulate to `m5 exit`.
Both write OUT/result.json: how the simulation ended, simulated and host seconds.
A guard stops a run that exceeds its simulated or host time, or whose guest panics.

A run may be cut into segments ("segment" in PARAMS): each ends at a phase boundary of
the guest (its stats dump-and-reset) or on a grid of simulated time, dumps the phase's
statistics so far as a partial block, saves a checkpoint and stops; the next segment
restores it. Every segment boundary is a restore, whether or not the run was killed,
so a run resumed from its newest checkpoint equals one never interrupted.
"""

import atexit
import json
import sys
import time
from pathlib import Path

import m5
from m5.objects import CowDiskImage, IdeDisk, RawDiskImage

from gem5.components.boards.x86_board import X86Board
from gem5.components.cachehierarchies.classic.no_cache import NoCache
from gem5.components.cachehierarchies.classic.private_l1_private_l2_walk_cache_hierarchy import (
    PrivateL1PrivateL2WalkCacheHierarchy,
)
from gem5.components.cachehierarchies.classic.private_l1_shared_l2_cache_hierarchy import (
    PrivateL1SharedL2CacheHierarchy,
)
from gem5.components.memory import single_channel
from gem5.components.processors.cpu_types import CPUTypes
from gem5.components.processors.simple_processor import SimpleProcessor
from gem5.isas import ISA
from gem5.resources.resource import DiskImageResource, KernelResource
from gem5.simulate.exit_event import ExitEvent
from gem5.simulate.simulator import Simulator

CPU_TYPES = {"atomic": CPUTypes.ATOMIC, "timing": CPUTypes.TIMING, "o3": CPUTypes.O3,
             "kvm": CPUTypes.KVM}
MEMORIES = {"DDR3_1600": single_channel.SingleChannelDDR3_1600,
            "DDR4_2400": single_channel.SingleChannelDDR4_2400,
            "LPDDR3_1600": single_channel.SingleChannelLPDDR3_1600}
PANIC_TEXT = "Kernel panic - not syncing"
# On more than one core the guest's `m5 exit` can come before the last of its console
# output has left the tty's buffer for the UART (a 4-core smoke job ended mid-line, with
# no job_end): the run goes on until the console holds the job's end marker, at most
# this long, so a multi-core run ends with all its guest's lines.
JOB_END = '"event":"job_end"'
DRAIN_MAX_S = 0.1


def cache_hierarchy(caches: dict):
    kind = caches["hierarchy"]
    if kind == "none":
        return NoCache()
    sizes = {"l1d_size": caches["l1d"], "l1i_size": caches["l1i"], "l2_size": caches["l2"]}
    if kind == "private-l1-private-l2":
        return PrivateL1PrivateL2WalkCacheHierarchy(**sizes)
    if kind == "private-l1-shared-l2":
        return PrivateL1SharedL2CacheHierarchy(**sizes)
    raise ValueError(f"unknown cache hierarchy {kind!r}")


def bandwidth(mb_s: float) -> str:
    """A datasheet's MB/s (10^6 bytes) for gem5, which reads "MB/s" as MiB/s."""
    return f"{mb_s * 1e6:.0f}B/s"


def disksim_time_offset_ps(seed: int) -> int:
    """A drive's seed as DiskSim sees it: an offset, under a simulated second, added to
    every time DiskSim is given (splitmix64 of the seed). DiskSim draws nothing at random;
    its platters' angle is a function of time, so the offset is where they stand under
    the run's requests."""
    z = (seed + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return (z ^ (z >> 31)) % 10**12


def disksim_timing(timing: dict, seed: int, index: int, request_log: bool):
    """gem5-patches/0005's DiskSimTiming: the profile's DiskSim parameter file, the
    drive's own files found in the DiskSim build linked into this gem5 (a derived drive's
    rewritten platters in a folder of their own: search_path)."""
    from m5.objects import DiskSimTiming  # only in a gem5 built with --disksim
    from m5.objects.reclaimstudy_disksim import RECLAIMSTUDY_DISKSIM

    return DiskSimTiming(
        parameters=timing["parameters_path"],
        search_path=timing.get("search_path") or RECLAIMSTUDY_DISKSIM["valid_dir"],
        overrides=[value for triple in timing["overrides"] for value in triple],
        devno=timing["devno"], sector_offset=timing["sector_offset"], rpm=timing["rpm"],
        time_offset=f"{disksim_time_offset_ps(seed)}ps",
        request_log=f"disksim-requests-{index}.txt" if request_log else "")


def simplessd_timing(timing: dict, index: int, request_log: bool):
    """gem5-patches/0006's SimpleSSDTiming: the profile's SimpleSSD configuration (the
    whole drive). SimpleSSD draws nothing at random, so the run's seed does not reach it."""
    from m5.objects import SimpleSSDTiming  # only in a gem5 built with --simplessd

    # A phone's eMMC: the same drive behind an eMMC bus (gem5-patches/0008). A SATA drive
    # leaves the parameter at its default, as before 0008.
    link = {"link": "emmc"} if timing["interface"] == "emmc" else {}
    return SimpleSSDTiming(
        config=timing["config_path"], sector_offset=timing["sector_offset"],
        request_log=f"simplessd-requests-{index}.txt" if request_log else "", **link)


# gem5-patches/0007's NVMe drive on the board's PCI bus: the slot after the IDE
# controller's (device 4), and the I/O APIC input its INTA is routed to by an MP table
# entry of ours (the board routes device 4's INTA to input 16 and no other).
NVME_PCI_DEV = 5
NVME_IOAPIC_PIN = 17


def simplessd_nvme(timing: dict, path: str, request_log: bool):
    """gem5-patches/0007's SimpleSSDNVMe: SimpleSSD's NVMe controller on the PCI bus, its
    namespace the disk image at `path` (copy-on-write in gem5, as the IDE disks')."""
    from m5.objects import SimpleSSDNVMe  # only in a gem5 built with --simplessd and 0007

    nvme = SimpleSSDNVMe(pci_bus=0, pci_dev=NVME_PCI_DEV, pci_func=0,
                         InterruptLine=NVME_IOAPIC_PIN, config=timing["config_path"],
                         input_log="simplessd-nvme-inputs.txt" if request_log else "")
    nvme.image = CowDiskImage(child=RawDiskImage(read_only=True), read_only=False)
    nvme.image.child.image_file = path
    return nvme


def attach_nvme(board: X86Board, nvme) -> None:
    """Put the NVMe drive on the board's PCI bus: its registers and DMA on the I/O bus
    (as the IDE controller's), the PCI host's, and its INTA routed to
    NVME_IOAPIC_PIN in the MP table Linux reads its PCI interrupts from."""
    from m5.objects import X86IntelMPIOIntAssignment

    nvme.host = board.pc.pci_host
    nvme.pio = board.get_io_bus().mem_side_ports
    nvme.dma = board.get_io_bus().cpu_side_ports
    board.pc.nvme = nvme
    table = board.workload.intel_mp_table
    inta = X86IntelMPIOIntAssignment(
        interrupt_type="INT", polarity="ConformPolarity", trigger="ConformTrigger",
        source_bus_id=0, source_bus_irq=NVME_PCI_DEV << 2,
        dest_io_apic_id=board.get_processor().get_num_cores(),  # the board's I/O APIC
        dest_io_apic_intin=NVME_IOAPIC_PIN)
    # A child of the table first, then in its list (assigned whole, as the board does).
    table.nvme_inta = inta
    table.base_entries = list(table.base_entries) + [inta]


def disk_timing(timing: dict, seed: int):
    """gem5-patches/' request-level model for a profile's [disk.timing] (per ATA command)."""
    from m5.objects import FlashTiming, HddTiming  # only in a gem5 built with gem5-patches/

    if timing["model"] == "hdd":
        return HddTiming(
            seed=seed, rpm=timing["rpm"],
            seek_track_to_track=f"{timing['seek_track_to_track_ms']}ms",
            seek_average=f"{timing['seek_average_ms']}ms",
            seek_full_stroke=f"{timing['seek_full_stroke_ms']}ms",
            media_bandwidth=bandwidth(timing['media_mb_s']),
            interface_bandwidth=bandwidth(timing['interface_mb_s']),
            read_overhead=f"{timing['read_overhead_ms']}ms",
            write_overhead=f"{timing['write_overhead_ms']}ms",
            stroke_sectors=timing["stroke_sectors"],
            write_cache=f"{timing['write_cache_mib']}MiB")
    if timing["model"] == "flash":
        return FlashTiming(
            seed=seed, read_latency=f"{timing['read_latency_us']}us",
            write_latency=f"{timing['write_latency_us']}us",
            read_bandwidth=bandwidth(timing['read_mb_s']),
            write_bandwidth=bandwidth(timing['write_mb_s']),
            interface_bandwidth=bandwidth(timing['interface_mb_s']),
            read_overhead=f"{timing['read_overhead_us']}us",
            write_overhead=f"{timing['write_overhead_us']}us", jitter=timing["jitter"])
    raise ValueError(f"unknown disk timing model {timing['model']!r}")


def ide_disk(path: str, drive: str, index: int, params: dict) -> IdeDisk:
    """An IDE disk whose writes stay in gem5 (copy-on-write), so the image is never changed.

    Timed per ATA command by gem5-patches/' model when the profile has [disk.timing] (or
    by DiskSim, model = "disksim", or SimpleSSD, model = "simplessd"); otherwise by gem5's
    IdeDisk.delay, a fixed latency per DMA descriptor.
    """
    if params["disk_timing"] and params["disk_timing"]["model"] == "disksim":
        # Each drive its own DiskSim, its platters' phase decided by the run's seed.
        disk = IdeDisk(driveID=drive, timing=disksim_timing(
            params["disk_timing"], 2 * params["disk_seed"] + index, index,
            params.get("disk_request_log", False)))
    elif params["disk_timing"] and params["disk_timing"]["model"] == "simplessd":
        # One SimpleSSD drive a process (the profile holds root and swap on it).
        disk = IdeDisk(driveID=drive, timing=simplessd_timing(
            params["disk_timing"], index, params.get("disk_request_log", False)))
    elif params["disk_timing"]:
        # Each drive its own random source, all decided by the run's seed.
        disk = IdeDisk(driveID=drive, timing=disk_timing(params["disk_timing"],
                                                         2 * params["disk_seed"] + index))
    else:
        disk = IdeDisk(driveID=drive, delay=f"{params['disk_delay_us']}us")
    disk.image = CowDiskImage(child=RawDiskImage(read_only=True), read_only=False)
    disk.image.child.image_file = path
    return disk


def walker_params(params: dict) -> dict:
    """gem5-patches/0009's parameters for every page walker: atomic flag updates on a
    system of more than one core, where a walker's plain write of an entry's flags can
    undo another core's change to it; none on one core (the walkers as before 0009). A
    test may set them itself ("walker" in PARAMS: e.g. forced failures on one core)."""
    if "walker" in params:
        return params["walker"]
    return {"atomic_flag_updates": True} if params["cores"] > 1 else {}


def build_board(params: dict) -> X86Board:
    processor = SimpleProcessor(cpu_type=CPU_TYPES[params["cpu"]], num_cores=params["cores"],
                                isa=ISA.X86)
    if params["cpu"] == "kvm":
        for core in processor.get_cores():
            core.core.usePerf = False  # perf counters are often unavailable to KVM guests' hosts
    for name, value in walker_params(params).items():
        for core in processor.get_cores():
            for tlb in (core.core.mmu.itb, core.core.mmu.dtb):
                setattr(tlb.walker, name, value)
    memory = MEMORIES[params["memory"]["type"]](size=f"{params['memory']['size_mib']}MiB")
    board = X86Board(clk_freq=params["clock"], processor=processor, memory=memory,
                     cache_hierarchy=cache_hierarchy(params["caches"]))
    workload = {"kernel": KernelResource(local_path=params["kernel"]),
                "disk_image": DiskImageResource(local_path=params["disks"][0]),
                "kernel_args": params["kernel_args"]}
    if params["mode"] == "run":
        workload["checkpoint"] = Path(params["checkpoint"])
        workload["readfile_contents"] = params["readfile_contents"]
    board.set_kernel_disk_workload(**workload)
    timing = params["disk_timing"]
    if timing and timing.get("interface") == "nvme":
        # Root and swap on the NVMe namespace's partitions (/dev/nvme0n1p1 and p2); the
        # IDE controller holds no disk (a process holds one SimpleSSD drive).
        board.pc.south_bridge.ide.disks = []
        attach_nvme(board, simplessd_nvme(timing, params["disks"][0],
                                          params.get("disk_request_log", False)))
        return board
    # Root on /dev/sda and swap on /dev/sdb, or both on /dev/sda's partitions. The list
    # is assigned whole: appending to the board's own list does not take.
    board.pc.south_bridge.ide.disks = [
        ide_disk(path, f"device{index}", index, params)
        for index, path in enumerate(params["disks"])
    ]
    return board


class Outcome:
    """How the simulation ended; written to result.json."""

    def __init__(self, params: dict, outdir: Path):
        self.params = params
        self.outdir = outdir
        self.status = "running"
        self.detail = ""
        self.started = time.monotonic()
        self.console = outdir / "board.pc.com_1.device"
        self.segment = None  # how a segment ended (Segment.close)

    def end(self, status: str, detail: str = "") -> bool:
        self.status, self.detail = status, detail
        return True

    def console_holds(self, text: str) -> bool:
        """Whether the console's last 64 KiB hold `text`."""
        try:
            with open(self.console, errors="replace") as handle:
                handle.seek(max(0, self.console.stat().st_size - 65536))
                return text in handle.read()
        except FileNotFoundError:
            return False

    def guest_panicked(self) -> bool:
        return self.console_holds(PANIC_TEXT)

    def write(self):
        result = {"mode": self.params["mode"], "status": self.status, "detail": self.detail,
                  "sim_seconds": m5.curTick() / 1e12,
                  "host_seconds": round(time.monotonic() - self.started, 2),
                  "segment": self.segment}
        (self.outdir / "result.json").write_text(json.dumps(result, indent=2) + "\n")


class Segment:
    """Where this process's part of a segmented run ends, and what it has seen of the
    guest's statistics. gem5 calls m5.stats.dump and m5.stats.reset by name for the
    guest's m5 ops (pybind11/stats.cc), so wrapping them observes every phase boundary."""

    def __init__(self, spec: dict):
        self.every_ticks = int(spec["every_sim_s"] * 1e12)
        self.at_phases = spec["at_phases"]
        self.save_to = Path(spec["save_to"])
        self.phases_begun = spec["phases_begun"]  # the guest reset its stats in an earlier segment
        self.next_grid = None
        self.last_reset = 0
        self.boundary = False  # the guest just closed a phase: end the segment here
        self.dump, self.reset = m5.stats.dump, m5.stats.reset

    def _guest_dump(self, *args, **kwargs):
        self.dump(*args, **kwargs)
        if self.phases_begun and self.at_phases:
            self.boundary = True
            m5.scheduleTickExitFromCurrent(0)  # handled by the guard: ends the segment

    def _guest_reset(self, *args, **kwargs):
        self.reset(*args, **kwargs)
        self.last_reset = m5.curTick()
        if self.own_resets:
            self.own_resets -= 1
            return
        self.phases_begun = True

    def restored(self):
        """At the restored tick: statistics count from here (gem5 starts them at tick 0),
        the grid of segment ends is absolute, whatever tick this is, and from now on
        every stats dump or reset is the guest's (instantiation made its own before)."""
        self.reset()
        self.last_reset = m5.curTick()
        self.next_grid = (m5.curTick() // self.every_ticks + 1) * self.every_ticks
        m5.scheduleTickExitAbsolute(self.next_grid)  # handled by the guard, as its own
        # The first simulate() still resets the stats once itself (m5/simulate.py).
        self.own_resets = 1 if sys.modules["m5.simulate"].need_startup else 0
        m5.stats.dump, m5.stats.reset = self._guest_dump, self._guest_reset

    def no_dump_at_exit(self):
        """gem5 registers a stats dump at process exit (whichever dump was current)."""
        atexit.unregister(self.dump)
        atexit.unregister(self._guest_dump)

    def due(self) -> str | None:
        if self.boundary:
            return "phase"
        return "grid" if m5.curTick() >= self.next_grid else None

    def close(self, simulator, why: str) -> dict:
        """Dump the open phase's statistics so far (a partial block, joined to the rest of
        its phase by the study), save the checkpoint, and say what was done."""
        partial = self.phases_begun and m5.curTick() > self.last_reset
        if partial:
            self.dump()
        self.no_dump_at_exit()
        simulator.save_checkpoint(self.save_to)
        return {"why": why, "tick": m5.curTick(), "partial_block": partial,
                "phases_begun": self.phases_begun}


def main(params_path: str):
    params = json.loads(Path(params_path).read_text())
    outdir = Path(m5.options.outdir)
    outcome = Outcome(params, outdir)
    segment = Segment(params["segment"]) if params.get("segment") else None
    board = build_board(params)
    guard_ticks = int(params["guard_interval_ms"] * 1e9)
    max_ticks = int(params["max_sim_seconds"] * 1e12)

    def on_checkpoint():
        if params["mode"] == "boot":
            simulator.save_checkpoint(Path(params["checkpoint"]))
            return outcome.end("checkpoint")
        return False  # a restored guest does not ask again; ignore it if it does

    draining_until = None  # the tick a multi-core run's console drain ends at the latest

    def exited():
        # The guest closed its last phase with dumpresetstats: no tail block at exit.
        if segment:
            segment.no_dump_at_exit()
        else:
            atexit.unregister(m5.stats.dump)
        return outcome.end("exit")

    def on_exit():
        nonlocal draining_until
        if params["mode"] == "boot":
            return outcome.end("error", "the guest exited before asking for a checkpoint")
        if params["cores"] > 1 and not outcome.console_holds(JOB_END):
            draining_until = m5.curTick() + int(DRAIN_MAX_S * 1e12)
            return False  # on to the guards, which end it once the console is whole
        return exited()

    def on_fail():
        return outcome.end("guest-fail", simulator.get_last_exit_event_cause())

    def on_guard():
        if draining_until is not None:
            if outcome.console_holds(JOB_END) or m5.curTick() >= draining_until:
                return exited()
            m5.scheduleTickExitFromCurrent(guard_ticks)
            return False
        if segment is not None and segment.due():
            outcome.segment = segment.close(simulator, segment.due())
            return outcome.end("segment", outcome.segment["why"])
        if outcome.guest_panicked():
            return outcome.end("kernel-panic", "the guest kernel panicked")
        if m5.curTick() >= max_ticks:
            return outcome.end("sim-time-limit", f"over {params['max_sim_seconds']} s simulated")
        if time.monotonic() - outcome.started > params["max_host_seconds"]:
            return outcome.end("host-time-limit", f"over {params['max_host_seconds']} s of host time")
        m5.scheduleTickExitFromCurrent(guard_ticks)
        return False

    simulator = Simulator(board=board, on_exit_event={
        ExitEvent.CHECKPOINT: on_checkpoint,
        ExitEvent.EXIT: on_exit,
        ExitEvent.FAIL: on_fail,
        ExitEvent.SCHEDULED_TICK: on_guard,
        ExitEvent.KERNEL_PANIC: lambda: outcome.end("kernel-panic", "gem5 saw a kernel panic"),
        # Work items are not used by the study: never let them stop a run.
        ExitEvent.WORKBEGIN: lambda: False,
        ExitEvent.WORKEND: lambda: False,
    })
    # The first guard fires after instantiation (which may restore the checkpoint's tick).
    # Its exit string stays gem5's default: only that one maps to SCHEDULED_TICK.
    simulator._instantiate()
    if segment is not None:
        segment.restored()
    m5.scheduleTickExitFromCurrent(guard_ticks)
    simulator.run()
    if outcome.status == "running":
        outcome.end("error", f"simulation stopped: {simulator.get_last_exit_event_cause()}")
    outcome.write()
    print(f"reclaim_fs: {params['mode']} ended: {outcome.status} {outcome.detail}".rstrip())


if __name__ == "__m5_main__" or __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: gem5 [gem5 options] reclaim_fs.py PARAMS.json", file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1])
