"""What every backend gives the guest alike: its kernel command line."""

from reclaimstudy.config.systems import Disk

# Where root and swap are, for each guest layout (Disk.guest_layout, the one place a
# profile's layout is decided; systems.GUEST_LAYOUTS): two IDE disks ("device"); one IDE
# disk with a partition table, root first, swap after it ("partition"); that partitioned
# disk as an NVMe drive's namespace ("nvme": gem5-patches/0007, or QEMU's nvme device;
# Linux names it nvme0n1 and its partitions p1, p2); or the root IDE disk alone with swap
# on zram, in memory ("zram": its size and compressor from swap_args).
DEVICES = {"device": ("/dev/sda", "/dev/sdb"), "partition": ("/dev/sda1", "/dev/sda2"),
           "nvme": ("/dev/nvme0n1p1", "/dev/nvme0n1p2"), "zram": ("/dev/sda", "/dev/zram0")}


def swap_args(disk: Disk) -> str:
    """The swap device for /init (reclaim.swap=), and for zram its size in MiB and its
    compressor (reclaim.zram=MIB,COMPRESSOR), which /init hands to zram-swap."""
    layout = disk.guest_layout
    words = f"reclaim.swap={DEVICES[layout][1]}"
    if layout == "zram":
        words += f" reclaim.zram={disk.zram_mib},{disk.compressor}"
    return words


def kernel_cmdline(backend: str, extra: str, disk: Disk) -> str:
    """Root on the profile's root device (DEVICES, by its Disk.guest_layout), console on
    the first UART, our /init, and the swap (swap_args); `extra` is the backend's own
    (QEMU: no_timer_check; gem5: idle and loops-per-jiffy)."""
    line = (f"root={DEVICES[disk.guest_layout][0]} rw rootwait console=ttyS0 quiet panic=-1 "
            f"init=/init reclaim.backend={backend} {swap_args(disk)}")
    return f"{line} {extra}".strip()
