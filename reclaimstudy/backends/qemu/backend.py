"""The QEMU backend for runs: functional checks without hardware timing.

Same kernel, image and job protocol as gem5; the job reaches the guest through fw_cfg.
QEMU's numbers are never a stand-in for gem5's timing, and every record says which
backend and accelerator produced it.
"""

from pathlib import Path

from reclaimstudy.artefacts.image import build_image, image_inputs, image_key, image_record
from reclaimstudy.artefacts.kernel import build_kernel, current_kernel_key
from reclaimstudy.backends.base import Backend, Outcome, Prepared
from reclaimstudy.backends.guest import kernel_cmdline
from reclaimstudy.backends.qemu import boot as qemu

JOB_FW_CFG = "opt/reclaim/job"
DEFAULT_TIMEOUT_S = 900.0


class QemuBackend(Backend):
    name = "qemu"
    console_file = "console.log"

    def identity(self, spec) -> dict:
        return {"kernel": current_kernel_key(), "image": image_key(image_inputs(spec.system))}

    def prepare(self, spec) -> Prepared:
        """Build (or reuse) the kernel and image; the accelerator is probed once."""
        kernel = build_kernel()
        image = build_image(spec.system)
        accel, why = qemu.choose_accel(kernel.bzimage)
        kernel_manifest, image_manifest = kernel.manifest, image.manifest
        return Prepared(
            # What the run id hashes: the accelerator changes no result a run records.
            identity={"kernel": kernel_manifest["key"], "image": image_manifest["key"]},
            record={
                "kernel": {key: kernel_manifest[key] for key in
                           ("key", "source_version", "config_sha256", "bzimage_sha256",
                            "vmlinux_sha256")},
                "image": image_record(image_manifest),
                "qemu": {"accel": accel, "accel_reason": why},
            },
            parts={"kernel": kernel, "image": image, "accel": accel})

    def run(self, spec, prepared: Prepared, job: Path, run_dir: Path,
            timeout_s: float | None = None, work: Path | None = None) -> Outcome:
        timeout_s = timeout_s or DEFAULT_TIMEOUT_S
        kernel, image = prepared.parts["kernel"], prepared.parts["image"]
        # no_timer_check: under TCG on a busy host the kernel's boot-time check of the
        # IO-APIC timer can miss its ticks and panic ("IO-APIC + timer doesn't work!").
        boot = qemu.Boot(
            bzimage=kernel.bzimage,
            cmdline=kernel_cmdline(self.name, "no_timer_check", spec.system.disk),
            memory_mib=spec.system.memory_mib,
            cpus=spec.system.cpu.cores, disks=image.disks(spec.system.disk.swap),
            console_log=run_dir / self.console_file, fw_cfg={JOB_FW_CFG: job},
            timeout_s=timeout_s, interface="nvme" if spec.system.disk.nvme else "ide")
        result = qemu.run(boot, accel=prepared.parts["accel"])
        # Paths inside the run directory are recorded relative to it: the directory moves
        # into place when the run is published.
        command = [word.replace(f"{run_dir}/", "") for word in result.command]
        info = {"accel": result.accel, "wall_seconds": round(result.wall_seconds, 2),
                "exit_code": result.exit_code, "command": command}
        failure = f"time-out after {timeout_s:.0f} s" if result.timed_out else None
        return Outcome(failure, info)
