"""A private one-node Slurm cluster for tests: munged, slurmctld and slurmd on localhost,
every file of theirs (config, munge key and socket, state, spool, logs) in one directory.

Debian 12's slurm-wlm 22.05 and munge 0.5.15, as root, with no systemd and no cgroups.
Clients find it through SLURM_CONF (env()). What each setting is for, and the pitfalls
it avoids, are said where it is written. There is no accounting database: finished jobs
are kept in the job-completion log, which `sacct -c` reads.
"""

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd", "slurmstepd")
TOOLS = ("munged", "munge", "slurmctld", "slurmd", "sinfo", "sbatch", "squeue", "scontrol",
         "scancel", "sacct")


def missing() -> str | None:
    """Why a cluster cannot be started here, or None."""
    if os.geteuid() != 0:
        return "the daemons run as root here, and this is not root"
    absent = [tool for tool in TOOLS if shutil.which(tool) is None]
    if absent:
        return f"Slurm or munge is not installed (no {', '.join(absent)})"
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _hardware() -> dict:
    """What slurmd finds: CPUs=2 Boards=1 ... RealMemory=24105."""
    line = subprocess.run(["slurmd", "-C"], capture_output=True, text=True,
                          check=True).stdout.splitlines()[0]
    return dict(word.split("=", 1) for word in line.split() if "=" in word)


def _alive(pid_file: Path) -> int | None:
    """The pid in `pid_file` if that process lives. PID 1 here reaps slowly, and kill -0
    succeeds on a zombie, so the state is read from /proc."""
    try:
        pid = int(pid_file.read_text().strip())
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, ValueError, IndexError):
        return None
    return None if state in ("Z", "X") else pid


class Cluster:
    def __init__(self, directory: Path):
        self.dir = directory.resolve()
        self.node = socket.gethostname().split(".")[0]
        self.conf = self.dir / "etc" / "slurm.conf"
        # slurmstepd's socket DIR/spool/NODE_JOBID.STEPID must fit in 107 bytes.
        if len(str(self.dir)) > 107 - len("/spool/_12345678.4294967291") - len(self.node):
            raise RuntimeError(f"{self.dir}: too long for Slurm's socket names")

    def env(self) -> dict:
        return dict(os.environ, SLURM_CONF=str(self.conf))

    def _write_config(self, ctld_port: int, slurmd_port: int) -> None:
        for sub in ("etc", "munge", "state", "spool", "log", "run"):
            shutil.rmtree(self.dir / sub, ignore_errors=True)
            (self.dir / sub).mkdir(parents=True)
        (self.dir / "munge").chmod(0o755)  # munged wants its socket's folder a+x
        key = self.dir / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        (self.dir / "etc" / "plugstack.conf").write_text("")  # keeps /etc/slurm's out
        hw = _hardware()
        real_memory = int(hw["RealMemory"]) * 95 // 100  # more than slurmd finds DRAINs the node
        topology = " ".join(f"{k}={hw[k]}" for k in
                            ("CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket",
                             "ThreadsPerCore") if k in hw)
        d = self.dir
        self.conf.write_text(f"""\
ClusterName=reclaimtest
SlurmctldHost={self.node}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={d}/munge/munge.sock
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/run/slurmctld.pid
SlurmdPidFile={d}/run/slurmd.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
PlugStackConfig={d}/etc/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU={real_memory // int(hw.get("CPUs", 1))}
MpiDefault=none
MailProg=/bin/true
SwitchType=switch/none
SchedulerParameters=batch_sched_delay=0
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc={d}/log/jobcomp.txt
MinJobAge=86400
ReturnToService=2
KillWait=5
SlurmdTimeout=30
InactiveLimit=0
NodeName={self.node} NodeAddr=127.0.0.1 NodeHostname={self.node} {topology} \
RealMemory={real_memory} State=UNKNOWN
PartitionName=test Nodes={self.node} Default=YES MaxTime=INFINITE State=UP
""")

    def start(self, timeout_s: float = 30.0) -> None:
        self._write_config(_free_port(), _free_port())
        d, logs = self.dir, self.dir / "log"

        def daemon(command: list[str], name: str) -> None:
            with open(logs / f"{name}.stdio", "ab") as out:
                subprocess.run(command, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                               check=True, timeout=30)
        try:
            # --force: pytest's temporary folders are 0700, which munged otherwise refuses.
            daemon(["munged", "--force", f"--socket={d}/munge/munge.sock",
                    f"--key-file={d}/munge/munge.key", f"--log-file={d}/munge/munged.log",
                    f"--pid-file={d}/munge/munged.pid", f"--seed-file={d}/munge/munged.seed"],
                   "munged")
            daemon(["slurmctld", "-f", str(self.conf), "-i"], "slurmctld")
            daemon(["slurmd", "-f", str(self.conf), "-N", self.node], "slurmd")
            deadline = time.monotonic() + timeout_s
            while time.monotonic() < deadline:
                state = subprocess.run(["sinfo", "-h", "-n", self.node, "-o", "%T"],
                                       capture_output=True, text=True, env=self.env()).stdout
                if state.strip() == "idle":
                    return
                time.sleep(0.2)
            raise RuntimeError(f"the node is not idle after {timeout_s:.0f} s")
        except (RuntimeError, subprocess.SubprocessError) as error:
            tail = "".join(p.read_text()[-1500:] for p in sorted(logs.glob("*.log")))
            self.stop()
            raise RuntimeError(f"{error}; logs:\n{tail}") from None

    def _daemon_pids(self) -> list[int]:
        """Our daemons (and slurmstepd) by the files under DIR they hold open."""
        pids = []
        for proc in Path("/proc").glob("[0-9]*"):
            try:
                if (proc / "comm").read_text().strip() not in DAEMONS:
                    continue
                if any(os.readlink(fd).startswith(f"{self.dir}/") for fd in (proc / "fd").iterdir()):
                    pids.append(int(proc.name))
            except OSError:
                continue
        return pids

    def stop(self) -> None:
        """Cancel every job, stop the daemons, and kill anything of ours left over."""
        env = self.env()
        if _alive(self.dir / "run" / "slurmctld.pid"):
            subprocess.run(["scancel", "--quiet", "--user=root"], env=env, capture_output=True)
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and subprocess.run(
                    ["squeue", "-h", "-o", "%i"], env=env, capture_output=True,
                    text=True).stdout.strip():
                time.sleep(0.2)
            subprocess.run(["scontrol", "shutdown"], env=env, capture_output=True)
        deadline = time.monotonic() + 10
        pid_files = [self.dir / "run" / "slurmctld.pid", self.dir / "run" / "slurmd.pid"]
        while time.monotonic() < deadline and any(_alive(p) for p in pid_files):
            time.sleep(0.1)
        for pid_file in [*pid_files, self.dir / "munge" / "munged.pid"]:
            pid = _alive(pid_file)
            if pid:
                os.kill(pid, signal.SIGTERM)
        time.sleep(0.3)
        left = self._daemon_pids()
        for pid in left + _descendants(left):  # an orphaned slurmstepd and its job
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def _descendants(roots: list[int]) -> list[int]:
    parent = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    found = []
    for pid in parent:
        ancestor = parent.get(pid)
        while ancestor and ancestor > 1:
            if ancestor in roots:
                found.append(pid)
                break
            ancestor = parent.get(ancestor)
    return found
