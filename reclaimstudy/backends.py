"""The two ways to run a point: QEMU (functional, fast) and gem5 (the timing instrument)."""

from reclaimstudy.errors import StudyError

BACKENDS = ("qemu", "gem5")


def get_backend(name: str):
    if name == "qemu":
        from reclaimstudy import qemu_backend

        return qemu_backend
    if name == "gem5":
        from reclaimstudy import gem5_backend

        return gem5_backend
    raise StudyError(f"unknown backend '{name}'; allowed: {', '.join(BACKENDS)}")
