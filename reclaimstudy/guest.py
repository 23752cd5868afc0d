"""What every backend gives the guest alike: its kernel command line."""


def kernel_cmdline(backend: str, extra: str = "") -> str:
    """Root on the first IDE disk, console on the first UART, our /init; `extra` is the
    backend's own (QEMU: no_timer_check; gem5: idle and loops-per-jiffy)."""
    line = (f"root=/dev/sda rw rootwait console=ttyS0 quiet panic=-1 init=/init "
            f"reclaim.backend={backend}")
    return f"{line} {extra}".strip()
