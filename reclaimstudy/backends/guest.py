"""What every backend gives the guest alike: its kernel command line."""

# Where root and swap are, for each guest layout of a profile (Disk.guest_layout: its
# [disk] swap, or "nvme"): two IDE disks, one IDE disk with a partition table (root
# first, swap after it), or that partitioned disk as an NVMe drive's namespace
# (gem5-patches/0007; Linux names it nvme0n1 and its partitions p1, p2).
DEVICES = {"device": ("/dev/sda", "/dev/sdb"), "partition": ("/dev/sda1", "/dev/sda2"),
           "nvme": ("/dev/nvme0n1p1", "/dev/nvme0n1p2")}


def kernel_cmdline(backend: str, extra: str = "", layout: str = "device") -> str:
    """Root on the first disk, console on the first UART, our /init, and the swap
    device (/init reads reclaim.swap=); `layout` is the profile's Disk.guest_layout and
    `extra` is the backend's own (QEMU: no_timer_check; gem5: idle and
    loops-per-jiffy)."""
    root, swap_device = DEVICES[layout]
    line = (f"root={root} rw rootwait console=ttyS0 quiet panic=-1 init=/init "
            f"reclaim.backend={backend} reclaim.swap={swap_device}")
    return f"{line} {extra}".strip()
