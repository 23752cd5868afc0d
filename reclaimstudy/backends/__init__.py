"""How a point is run: on QEMU (functional, fast) or on gem5 (the timing instrument),
each behind the contract of base.py; the guest's kernel command line, the same on both
(guest.py). A backend is picked by name here, its module imported only then."""

from reclaimstudy.errors import StudyError

BACKENDS = ("qemu", "gem5")


def get_backend(name: str):
    """The backend called `name` (a base.Backend)."""
    if name == "qemu":
        from reclaimstudy.backends.qemu.backend import QemuBackend

        return QemuBackend()
    if name == "gem5":
        from reclaimstudy.backends.gem5.backend import Gem5Backend

        return Gem5Backend()
    raise StudyError(f"unknown backend '{name}'; allowed: {', '.join(BACKENDS)}")
