"""What every backend gives the guest alike: its kernel command line."""

# Where root and swap are, for each swap layout of a profile ([disk] swap): two disks,
# or one disk with a partition table (root first, swap after it).
DEVICES = {"device": ("/dev/sda", "/dev/sdb"), "partition": ("/dev/sda1", "/dev/sda2")}


def kernel_cmdline(backend: str, extra: str = "", swap: str = "device") -> str:
    """Root on the first IDE disk, console on the first UART, our /init, and the swap
    device (/init reads reclaim.swap=); `extra` is the backend's own (QEMU:
    no_timer_check; gem5: idle and loops-per-jiffy)."""
    root, swap_device = DEVICES[swap]
    line = (f"root={root} rw rootwait console=ttyS0 quiet panic=-1 init=/init "
            f"reclaim.backend={backend} reclaim.swap={swap_device}")
    return f"{line} {extra}".strip()
