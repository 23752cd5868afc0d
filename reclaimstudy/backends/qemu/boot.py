"""Boot the guest under QEMU: the fast functional backend (no hardware timing).

KVM is used only when a probe boot shows it makes progress: on nested-virtualised
hosts /dev/kvm exists but the guest hangs after the BIOS. The verdict is cached.
"""

import json
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from reclaimstudy.errors import StudyError
from reclaimstudy.paths import cache_dir
from reclaimstudy.util import hostdeps
from reclaimstudy.util.progress import console
from reclaimstudy.util.subprocesses import supervised

QEMU = "qemu-system-x86_64"
# The kernel prints this early; seeing it proves the accelerator runs the guest.
PROBE_MARKER = b"Linux version"
PROBE_SECONDS = 20


@dataclass
class Boot:
    """One QEMU boot: what to run and where its console goes."""
    bzimage: Path
    cmdline: str
    memory_mib: int
    disks: list[Path]
    console_log: Path
    cpus: int = 1
    fw_cfg: dict[str, Path] = field(default_factory=dict)
    timeout_s: float = 600.0
    # How the disks meet the guest: IDE (sda, sdb), or each an NVMe drive's namespace
    # (nvme0n1: a profile whose drive is gem5-patches/0007's NVMe drive).
    interface: str = "ide"


@dataclass
class BootResult:
    accel: str
    exit_code: int | None
    timed_out: bool
    wall_seconds: float
    command: list[str]


def base_command(accel: str, bzimage: Path, cmdline: str, memory_mib: int, cpus: int) -> list[str]:
    return [QEMU, "-machine", "pc", "-accel", accel, "-cpu", "max" if accel == "tcg" else "host",
            "-m", f"{memory_mib}M", "-smp", str(cpus), "-kernel", str(bzimage),
            "-append", cmdline, "-display", "none", "-monitor", "none", "-no-reboot",
            "-nodefaults"]


def command(boot: Boot, accel: str) -> list[str]:
    cmd = base_command(accel, boot.bzimage, boot.cmdline, boot.memory_mib, boot.cpus)
    # -snapshot: the guest's writes go to temporary files, so every boot starts
    # from the same disk contents.
    cmd += ["-snapshot", "-serial", f"file:{boot.console_log}"]
    for index, disk in enumerate(boot.disks):
        if boot.interface == "nvme":
            cmd += ["-drive", f"file={disk},format=raw,if=none,id=nvme{index}",
                    "-device", f"nvme,drive=nvme{index},serial=reclaimstudy{index}"]
        else:
            cmd += ["-drive", f"file={disk},format=raw,if=ide,index={index},media=disk"]
    for name, path in boot.fw_cfg.items():
        cmd += ["-fw_cfg", f"name={name},file={path}"]
    return cmd


def _kvm_verdict_path() -> Path:
    return cache_dir() / "kvm-verdict.json"


def probe_kvm(bzimage: Path) -> tuple[bool, str]:
    """(usable, reason): boot `bzimage` with KVM and no disk and look for the kernel banner."""
    if not os.path.exists("/dev/kvm"):
        return False, "/dev/kvm does not exist"
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return False, "/dev/kvm is not readable and writable by this user"
    cmd = base_command("kvm", bzimage, "console=ttyS0 panic=-1", 64, 1) + ["-serial", "stdio"]
    started = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=PROBE_SECONDS)
    except subprocess.TimeoutExpired as expired:
        if PROBE_MARKER in (expired.stdout or b""):
            return True, "a probe boot printed the kernel banner"
        return False, (f"a probe boot printed no kernel banner in {PROBE_SECONDS} s "
                       "(nested virtualisation?)")
    if PROBE_MARKER in proc.stdout:
        return True, f"a probe boot printed the kernel banner in {time.monotonic() - started:.1f} s"
    error = next((line for line in proc.stderr.decode(errors="replace").splitlines()
                  if "error" in line.lower()), "no message")
    return False, f"QEMU with KVM stopped at once (exit {proc.returncode}): {error}"


def choose_accel(bzimage: Path) -> tuple[str, str]:
    """('kvm' or 'tcg', why). The probe runs once per host; its verdict is cached."""
    forced = os.environ.get("RECLAIMSTUDY_QEMU_ACCEL")
    if forced:
        if forced not in ("kvm", "tcg"):
            raise StudyError(f"RECLAIMSTUDY_QEMU_ACCEL={forced!r}: allowed values are kvm, tcg")
        return forced, "set by RECLAIMSTUDY_QEMU_ACCEL"
    path = _kvm_verdict_path()
    host = os.uname().release
    if path.is_file():
        verdict = json.loads(path.read_text())
        if verdict.get("host_kernel") == host:
            return ("kvm" if verdict["usable"] else "tcg"), verdict["reason"] + " (cached)"
    usable, reason = probe_kvm(bzimage)
    path.write_text(json.dumps({"host_kernel": host, "usable": usable, "reason": reason}) + "\n")
    if not usable:
        console.print(f"QEMU: KVM is not usable here ({reason}); falling back to TCG (slower)")
    return ("kvm" if usable else "tcg"), reason


def run(boot: Boot, accel: str | None = None) -> BootResult:
    """Boot and wait for the guest to power off, or kill it at the time-out."""
    hostdeps.require_tool(QEMU)
    if accel is None:
        accel, _ = choose_accel(boot.bzimage)
    cmd = command(boot, accel)
    boot.console_log.parent.mkdir(parents=True, exist_ok=True)
    # Made here, not left to QEMU: a run killed before QEMU opened it still has a console
    # (empty) beside its record. QEMU's file chardev truncates it on open.
    boot.console_log.write_bytes(b"")
    started = time.monotonic()
    timed_out = False
    with supervised(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as proc:
        try:
            output, _ = proc.communicate(timeout=boot.timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            output, _ = proc.communicate()
            timed_out = True
    if output.strip():
        # QEMU's own messages (not the guest's), kept beside the console.
        boot.console_log.with_name("qemu.log").write_bytes(output)
    return BootResult(accel=accel, exit_code=None if timed_out else proc.returncode,
                      timed_out=timed_out, wall_seconds=time.monotonic() - started, command=cmd)
