"""Every system profile as the runs and the guest see it, printed as JSON: the profile's
identity() and memory_layout(), the kernel command line and disks each backend gives
the guest (QEMU's boot; gem5's KVM probe, boot for the checkpoint and run, each through
the backend's own code with the simulator stubbed out) and the boot checkpoint's key
for fixed kernel, image and simulator keys.

Run it on two commits and diff the outputs to see what a change did to the profiles:

    .venv/bin/python -m tests.benchmarks.profile_views > before.json
    (change, or check out another commit)
    .venv/bin/python -m tests.benchmarks.profile_views > after.json
    diff before.json after.json

It calls only entry points that have kept their signatures (QemuBackend.run,
gem5's run_params, kvm_usable, _boot_and_checkpoint, _checkpoint_key), so the same
script reads commits whose backends build the command line differently.
"""

import json
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

from reclaimstudy.backends.base import Prepared
from reclaimstudy.backends.gem5 import backend as gem5_backend
from reclaimstudy.backends.qemu import backend as qemu_backend
from reclaimstudy.config.systems import get_system, system_names

HZ = 1000


class Captured(Exception):
    """Raised by a stubbed simulator with what it was asked to run."""

    def __init__(self, what):
        super().__init__("captured")
        self.what = what


def _capture(*args, **kwargs):
    raise Captured(args)


class FakeImage:
    """Names each disk by the swap layout it was asked for."""
    manifest = {"key": "I"}

    def disks(self, swap: str) -> list[Path]:
        return [Path(f"/image/{swap}/{index}") for index in
                range({"device": 2}.get(swap, 1))]


KERNEL = SimpleNamespace(hz=HZ, vmlinux=Path("/kernel/vmlinux"),
                         bzimage=Path("/kernel/bzImage"), manifest={"key": "K"})


def qemu_view(system, scratch: Path) -> dict:
    spec = SimpleNamespace(system=system, repetition=0)
    prepared = Prepared({}, {}, {"kernel": KERNEL, "image": FakeImage(), "accel": "tcg"})
    with mock.patch.object(qemu_backend.qemu, "run", _capture):
        try:
            qemu_backend.QemuBackend().run(spec, prepared, scratch / "job", scratch)
        except Captured as captured:
            boot = captured.what[0]
            return {"cmdline": boot.cmdline, "disks": [str(d) for d in boot.disks],
                    "interface": getattr(boot, "interface", "ide"),
                    "memory_mib": boot.memory_mib, "cpus": boot.cpus}
    raise AssertionError("QEMU was not started")


def _gem5_params(params: dict) -> dict:
    return {key: value for key, value in params.items() if key != "checkpoint"}


def gem5_views(system, scratch: Path) -> dict:
    spec = SimpleNamespace(system=system, repetition=0)
    prepared = Prepared({}, {}, {"kernel": KERNEL, "image": FakeImage(),
                                 "checkpoint": Path("/checkpoint")})
    views = {"run": _gem5_params(gem5_backend.run_params(spec, prepared, "JOB", 60.0))}
    quiet = SimpleNamespace(print=lambda *a, **k: None)
    gem5 = SimpleNamespace(sha256="S")
    with mock.patch.object(gem5_backend, "simulate", _capture), \
            mock.patch.object(gem5_backend, "console", quiet), \
            mock.patch.object(gem5_backend, "cache_dir", lambda: scratch), \
            mock.patch.object(gem5_backend.os, "access", lambda *a: True):
        try:
            gem5_backend.kvm_usable(gem5, system, KERNEL, FakeImage())
        except Captured as captured:
            views["kvm_probe"] = _gem5_params(captured.what[1])
        with mock.patch.object(gem5_backend, "kvm_usable", lambda *a: (True, "")):
            try:
                gem5_backend._boot_and_checkpoint(gem5, KERNEL, FakeImage(), system, "key",
                                                  scratch / "final")
            except Captured as captured:
                views["boot"] = _gem5_params(captured.what[1])
    views["checkpoint_key"] = gem5_backend._checkpoint_key("G", "K", "I", HZ, system)
    return views


def main() -> int:
    views = {}
    with tempfile.TemporaryDirectory() as scratch:
        for name in system_names():
            system = get_system(name)
            views[name] = {"identity": system.identity(),
                           "memory_layout": system.memory_layout(),
                           "qemu": qemu_view(system, Path(scratch)),
                           "gem5": gem5_views(system, Path(scratch))}
    json.dump(views, sys.stdout, indent=1, sort_keys=True, default=str)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
