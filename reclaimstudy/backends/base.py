"""The backend contract: how a point is run on QEMU (functional, fast) or gem5 (the timing
instrument; backends/__init__.py picks one by name). A backend prepares a system once (kernel, image, and whatever else it
needs), runs one point into a run directory, names the file its guest console is
written to while running, and checks its own outputs before a run is published.
"""

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Prepared:
    """What a backend built for a system, once, for all its runs."""
    identity: dict   # what run ids hash: the artefacts' keys (record.run_identity)
    record: dict     # what run.json says about the artefacts
    parts: dict = field(default_factory=dict)  # the backend's own objects (kernel, image, ...)


@dataclass
class Outcome:
    """How one run went, as the backend saw it."""
    failure: str | None  # why the backend failed the run (a time-out, a simulator error)
    info: dict           # run.json's backend_info


class Backend(ABC):
    name: str
    # The guest console in the run directory while the run is running; runs.execute
    # finds it renamed to console.log once run() returns.
    console_file: str

    @abstractmethod
    def prepare(self, spec) -> Prepared:
        """Build or reuse what the spec's system needs."""

    @abstractmethod
    def identity(self, spec) -> dict:
        """What prepare(spec).identity will be, from the inputs alone, building nothing:
        a run's id is known before its kernel, image or checkpoint exist (a cluster
        submission names its runs before the job that prepares them has run)."""

    @abstractmethod
    def run(self, spec, prepared: Prepared, job: Path, run_dir: Path,
            timeout_s: float | None = None, work: Path | None = None) -> Outcome:
        """Run one point; leave console.log and the backend's outputs in run_dir. `work`:
        a folder that outlives this process, for what a run started again resumes from."""

    def check_outputs(self, run_dir: Path, phases: int) -> str | None:
        """Why the backend's own outputs of a finished run cannot be trusted, or None."""
        return None
