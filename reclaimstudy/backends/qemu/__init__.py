"""The QEMU backend: the guest booted under QEMU, fast and functional, with no timing model."""
