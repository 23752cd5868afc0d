"""The metrics the table reads from every run, declared in one place: the guest's
/proc/vmstat counters per phase and gem5's statistics per stats.txt block (each
workload declares its own in its meta.toml [metrics])."""

import re

from reclaimstudy.config.metrics import Better, MetricSpec


def _count(name: str, unit: str, help: str, better: Better = "lower") -> MetricSpec:
    return MetricSpec(name, unit, "count", better, help)


# Per phase: the table's name, the /proc/vmstat counters summed, what it is.
VMSTAT = [
    (_count("pgfault", "faults", "page faults"), ("pgfault",)),
    # Every process's faults that began a read, from mark to mark: what seed 000b's vmmon
    # counted (hot-stream's vmmon_pgmajfault at the stream's end less at its start). A
    # program's own count (getrusage) is its workload's metric, and can differ.
    (_count("pgmajfault", "faults", "major page faults, the whole system's"), ("pgmajfault",)),
    (_count("pswpin", "pages", "pages swapped in"), ("pswpin",)),
    (_count("pswpout", "pages", "pages swapped out"), ("pswpout",)),
    (_count("refault_anon", "pages", "anonymous refaults"), ("workingset_refault_anon",)),
    (_count("refault_file", "pages", "file refaults"), ("workingset_refault_file",)),
    (_count("pgactivate", "pages", "pages activated"), ("pgactivate",)),
    # 6.1 moves active pages back to balance the lists: what an activation costs again.
    (_count("pgdeactivate", "pages", "pages deactivated"), ("pgdeactivate",)),
    (_count("pgscan_kswapd", "pages", "pages scanned by kswapd"), ("pgscan_kswapd",)),
    (_count("pgscan_direct", "pages", "pages scanned in direct reclaim"), ("pgscan_direct",)),
    (_count("pgsteal_kswapd", "pages", "pages reclaimed by kswapd"), ("pgsteal_kswapd",)),
    (_count("pgsteal_direct", "pages", "pages reclaimed in direct reclaim"), ("pgsteal_direct",)),
    # The same reclaim by kind of page: what a policy takes from programs' memory and
    # what from the page cache.
    (_count("pgsteal_anon", "pages", "anonymous pages reclaimed"), ("pgsteal_anon",)),
    (_count("pgsteal_file", "pages", "file pages reclaimed"), ("pgsteal_file",)),
    (_count("allocstall", "stalls", "allocation stalls (direct reclaim entered)"),
     ("allocstall_dma", "allocstall_dma32", "allocstall_normal", "allocstall_movable")),
    (_count("pglazyfree", "pages", "pages marked lazy-free"), ("pglazyfree",)),
    (_count("pglazyfreed", "pages", "lazy-free pages reclaimed"), ("pglazyfreed",)),
    (_count("pgpgin", "KiB", "read from disk"), ("pgpgin",)),
    (_count("pgpgout", "KiB", "written to disk"), ("pgpgout",)),
]
# Per phase: the table's name and the /proc/vmstat level read at the phase's end.
VMSTAT_LEVELS = [
    # Anonymous pages written to swap and not yet freed: reclaim that writes more than it
    # frees leaves them here (seed 001's fill on the classic LRU).
    (MetricSpec("swapcache_end", "pages", "gauge", "none",
                "pages in the swap cache at the phase's end (written to swap, still in memory)"),
     "nr_swapcached"),
]
# Per phase: the table's name and the /proc/vmstat levels summed at the phase's start.
VMSTAT_START_LEVELS = [
    # What reclaim could take from programs when the phase began (a perturbation's held
    # memory among it), to set beside the phase's pgsteal_anon.
    (MetricSpec("anon_start", "pages", "gauge", "none",
                "anonymous pages on the LRU lists at the phase's start"),
     ("nr_inactive_anon", "nr_active_anon")),
]
PHASE_SECONDS = MetricSpec("phase_s", "s", "time", "lower",
                           "the phase's duration on the guest clock (simulated on gem5)")
RECLAIM_EFFICIENCY = MetricSpec("reclaim_efficiency", "ratio", "ratio", "higher",
                                "pages reclaimed per page scanned")


def vmstat_declarations() -> dict[str, MetricSpec]:
    """Every metric of the table's vmstat source by name (table.vmstat_rows makes them),
    so that a claim naming one is checked as a workload's metric is."""
    specs = [spec for spec, _ in VMSTAT + VMSTAT_LEVELS + VMSTAT_START_LEVELS]
    return {spec.name: spec for spec in specs + [PHASE_SECONDS, RECLAIM_EFFICIENCY]}


# A fact of the guest, not a result (source "guest", which compare never reads): what a
# regime's "Nx memory" is measured against, kept in the table so a published table
# alone can check regimes.
GUEST_MEMORY = MetricSpec("memtotal_mib", "MiB", "gauge", "none",
                          "the guest kernel's MemTotal at the job's start")
# What the swap device is to the guest (runjob's job_start: each disk's rotational flag
# and the flags swapon gave each swap area), so a published table alone shows which
# swap path a run took: the slot allocator and swap clustering differ for solid state.
SWAP_ROTATIONAL = MetricSpec("swap_rotational", "flag", "gauge", "none",
                             "1 when a swap area lies on a disk the guest sees as rotating")
SWAP_SOLID_STATE = MetricSpec("swap_solid_state", "flag", "gauge", "none",
                              "1 when swapon flagged every swap area solid state (SS)")
# What the repetition's perturbation did before the job (workloads/tools/perturb.c), so
# a published table alone can say how much a policy's reclaim took of it: its record's
# field -> the table's declaration.
PERTURBATION = {
    "delay_ms": MetricSpec("perturb_delay_ms", "ms", "gauge", "none",
                           "how long the perturbation waited before the job"),
    "file_kib": MetricSpec("perturb_file_kib", "KiB", "gauge", "none",
                           "what the perturbation read from disk into the page cache"),
    "anon_kib": MetricSpec("perturb_anon_kib", "KiB", "gauge", "none",
                           "anonymous memory the perturbation held, touched once, all the job long"),
}

# gem5 statistics per phase: (declaration, key pattern, how matches combine).
GEM5 = [
    (MetricSpec("sim_seconds", "s", "time", "lower", "simulated seconds"), r"^simSeconds$", "sum"),
    (MetricSpec("instructions", "instructions", "count", "lower", "committed instructions"),
     r"\.core\.commitStats0\.numInsts$", "sum"),
    # Cycles are the block's simulated ticks over the core clock's period (table.py):
    # gem5's own numCycles counts every tick since the simulation's start again after a
    # checkpoint restore, so in a segmented run it is far too large.
    (MetricSpec("cycles", "cycles", "count", "lower", "CPU clock cycles elapsed"),
     r"^simTicks$", "sum"),
    # Time-weighted share of the block the core was not halted (mean over cores).
    (MetricSpec("cpu_busy_share", "ratio", "ratio", "none",
                "share of simulated time the CPU was not idle"),
     r"\.notIdleFraction$", "mean"),
    (MetricSpec("l1d_miss_rate", "ratio", "ratio", "lower", "L1 data cache miss rate"),
     r"l1d-cache-\d+\.overallMissRate::total$", "mean"),
    (MetricSpec("l2_miss_rate", "ratio", "ratio", "lower", "L2 miss rate"),
     r"l2-cache(-\d+)?\.overallMissRate::total$", "mean"),
    # Bytes over the phase's time: a policy that moves the same bytes more slowly "uses
    # less", so it has no better side (a gauge; the counts above and below have one).
    (MetricSpec("dram_bw", "B/s", "gauge", "none", "DRAM bandwidth used"),
     r"mem_ctrl\d*\.dram\.bwTotal::total$", "sum"),
    (MetricSpec("dram_latency", "ticks", "time", "lower", "mean DRAM access latency"),
     r"mem_ctrl\d*\.dram\.avgMemAccLat$", "mean"),
    # gem5 names IDE DMA from the memory's side: the disk "reads" memory when it writes
    # a sector, and "writes" memory when it reads one. Summed over the root and swap disks;
    # the NVMe drive counts its namespace's bytes itself (gem5-patches/0007).
    (MetricSpec("disk_read_bytes", "B", "count", "lower", "bytes read from the disks"),
     r"(\.IdeDisk\.dmaWriteBytes|\.nvme\.mediaReadBytes)$", "sum"),
    (MetricSpec("disk_write_bytes", "B", "count", "lower", "bytes written to the disks"),
     r"(\.IdeDisk\.dmaReadBytes|\.nvme\.mediaWriteBytes)$", "sum"),
    # Our disk model's (gem5-patches/): commands' time from issue to data ready or
    # accepted, and the media's time seeking, rotating and transferring (a cached write
    # reaches the media after it was accepted, so the two overlap only in part).
    (MetricSpec("disk_service_ticks", "ticks", "time", "lower",
                "disk commands' time from issue to data ready or accepted, summed"),
     r"\.timing\.serviceTicks$", "sum"),
    (MetricSpec("disk_media_ticks", "ticks", "time", "lower",
                "disk media's time seeking, rotating and transferring, summed"),
     r"\.timing\.(seekTicks|rotationTicks|transferTicks)$", "sum"),
    # The same model's commands and its positioning time alone: where a policy makes the
    # disk read more, these tell more, smaller or scattered reads apart (the flash device
    # has no head, so its positioning time is 0).
    (MetricSpec("disk_reads", "commands", "count", "lower", "read commands the disks served"),
     r"(\.timing\.reads|\.nvme\.simplessd::read_request_count)$", "sum"),
    (MetricSpec("disk_writes", "commands", "count", "lower", "write commands the disks served"),
     r"(\.timing\.writes|\.nvme\.simplessd::write_request_count)$", "sum"),
    (MetricSpec("disk_position_ticks", "ticks", "time", "lower",
                "disk media's time seeking and waiting for rotation, summed"),
     r"\.timing\.(seekTicks|rotationTicks)$", "sum"),
    # Positioning split into its parts, and the drive's buffer as DiskSim counts it
    # (gem5-patches/0005; our analytic model has no segmented read cache): a read the
    # buffer held whole needs no positioning, a miss or partial hit goes to the media.
    (MetricSpec("disk_seek_ticks", "ticks", "time", "lower", "disk media's time seeking, summed"),
     r"\.timing\.seekTicks$", "sum"),
    (MetricSpec("disk_rotation_ticks", "ticks", "time", "lower",
                "disk media's time waiting for rotation, summed"),
     r"\.timing\.rotationTicks$", "sum"),
    (MetricSpec("disk_buffer_hits", "commands", "count", "higher",
                "reads the drive's buffer held whole or was reading ahead (DiskSim)"),
     r"\.timing\.(fullReadHits|readingHits)$", "sum"),
    (MetricSpec("disk_buffer_misses", "commands", "count", "lower",
                "reads the drive's buffer did not hold (DiskSim)"),
     r"\.timing\.readMisses$", "sum"),
    # SimpleSSD's flash (the SATA drive's `timing.simplessd::`, the NVMe drive's
    # `nvme.simplessd::`, gem5-patches/0006 and 0007): reads its DRAM cache served,
    # garbage collections and the pages they copied, and the flash's own page reads and
    # programs (what a policy's reads and swap writes cost the media).
    (MetricSpec("flash_cache_read_hits", "requests", "count", "higher",
                "reads the SSD's DRAM cache served (SimpleSSD)"),
     r"\.simplessd::icl_generic_cache_read_from_cache$", "sum"),
    (MetricSpec("flash_gc", "collections", "count", "lower",
                "the SSD's garbage collections (SimpleSSD)"),
     r"\.simplessd::ftl_page_mapping_gc_count$", "sum"),
    (MetricSpec("flash_gc_page_copies", "pages", "count", "lower",
                "pages the SSD's garbage collection copied (SimpleSSD)"),
     r"\.simplessd::ftl_page_mapping_gc_page_copies$", "sum"),
    (MetricSpec("flash_page_reads", "pages", "count", "lower",
                "flash page reads (SimpleSSD)"),
     r"\.simplessd::pal_read_count$", "sum"),
    (MetricSpec("flash_page_programs", "pages", "count", "lower",
                "flash page programs (SimpleSSD)"),
     r"\.simplessd::pal_program_count$", "sum"),
    # The hard disk model's commands that began where the one before ended: no seek and
    # no rotation, only the transfer. Where positioning is most of the disk's time (the
    # desktop), the commands that jump (DISK_JUMPS) are what a policy's run time follows.
    (MetricSpec("disk_sequential", "commands", "count", "higher",
                "disk commands that began where the one before ended (no seek or rotation)"),
     r"\.timing\.sequential$", "sum"),
]
# The core clock's period in ticks, to turn simTicks into cycles.
CLOCK_KEY = "board.clk_domain.clock"
CLOCK_PERIOD = f"^{re.escape(CLOCK_KEY)}$"
# gem5's tick is a picosecond (simFreq 1e12) in every configuration we run.
TICKS_PER_SECOND = 1e12
# Time in which neither the CPU nor any disk can have been busy: the phase's simulated
# time less the CPU's busy time and less the disks' service and media times added (an
# upper bound on the time they were busy, so this is a lower bound). A workload's own
# sleeps count (the perturbation's start delay, hot-stream's pauses); anything else is
# the guest waiting on a timer while IO is due (a reclaim throttle, a delayed queue run),
# to be explained before a timing is trusted (tests/benchmarks/RESULTS.md, "quiet time").
QUIET = MetricSpec("quiet_s", "s", "time", "lower",
                   "simulated time with neither the CPU nor a disk busy (a lower bound)")
IPC = MetricSpec("ipc", "ratio", "ratio", "higher", "instructions per cycle")
DISK_JUMPS = MetricSpec("disk_jumps", "commands", "count", "lower",
                        "disk commands that had to seek or wait for rotation (all but the "
                        "sequential ones)")

# A segmented gem5 run (reclaimstudy/backends/gem5/segments.py) may cut a phase's statistics into
# blocks at its checkpoints. Joining them: a counter adds; a ratio is averaged weighted
# by what gem5 divides by (its formula): (ratio's key pattern, the weight's key, made from
# the ratio's by re.sub).
BLOCK_WEIGHTS = [
    (r"overallMissRate::total$", "overallAccesses::total"),  # misses / accesses
    (r"\.dram\.avgMemAccLat$", ".dram.readBursts"),            # latency / reads
    (r"^.*bwTotal::total$", "simSeconds"),                      # bytes / seconds
    (r"^.*notIdleFraction$", "simSeconds"),                    # busy share of the time
    (CLOCK_PERIOD, "simSeconds"),                               # a constant period
]
