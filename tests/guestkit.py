"""Small guest file systems for tests: busybox, a script as /init, extra files."""

import shutil
import subprocess
from pathlib import Path

from reclaimstudy.artefacts.ext4 import make_ext4
from reclaimstudy.backends.qemu import boot as qemu

BUSYBOX = Path("/bin/busybox")  # Debian's busybox-static


def static_binary(source: Path, output: Path) -> Path:
    subprocess.run(["gcc", "-static", "-O2", "-Wall", "-o", str(output), str(source)], check=True)
    return output


def busybox_image(workdir: Path, init_script: Path, files: dict[str, Path | bytes],
                  size_mib: int = 64) -> Path:
    """ext4 image with /bin/busybox, `init_script` as /init, and `files` (guest path -> content)."""
    tree = workdir / "tree"
    for directory in ("bin", "proc", "sys", "dev", "tmp"):
        (tree / directory).mkdir(parents=True, exist_ok=True)
    shutil.copy2(BUSYBOX, tree / "bin/busybox")
    shutil.copy2(init_script, tree / "init")
    for guest_path, content in files.items():
        target = tree / guest_path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            shutil.copy2(content, target)
    return make_ext4(tree, workdir / "root.img", size_mib)


def marker_lines(console_log: Path, prefix: str = "@@") -> list[list[str]]:
    """The words of every console line starting with `prefix`."""
    lines = console_log.read_text(errors="replace").splitlines()
    return [line[len(prefix):].split() for line in lines if line.startswith(prefix)]


def boot_to_done(bzimage: Path, image: Path, memory_mib: int, timeout_s: float) -> list[list[str]]:
    """Boot a busybox image under QEMU and return its "@@" lines; its /init must print
    "@@done" (a time-out or a missing end fails, showing the console's tail)."""
    log = image.parent / "console.log"
    result = qemu.run(qemu.Boot(
        bzimage=bzimage, memory_mib=memory_mib, disks=[image], console_log=log,
        cmdline="root=/dev/sda rw console=ttyS0 panic=-1 init=/init", timeout_s=timeout_s))
    assert not result.timed_out, log.read_text(errors="replace")[-3000:]
    lines = marker_lines(log)
    assert ["done"] in lines, log.read_text(errors="replace")[-3000:]
    return lines
