"""How long a sweep's remaining runs will take, from what runs like them took before.

A gem5 study mixes runs of minutes with runs of an hour, so the mean of the runs a
sweep has finished so far says little about the ones still ahead. Every finished run
folder of the study records its wall time (run.json; for a resumed gem5 run, the sum
over its segments: record.host_wall_seconds), including runs on older artefacts, so
each run is priced from the closest earlier runs: same backend, workload,
system and policy, else same workload and system, else same workload; a run nothing
like it has run before is priced at the mean of every run on its backend. Among runs of
the same workload, those on the sweep's own kernel, image and simulator come first, even
when looser matches: a new guest can change what a run costs several times over, a
policy rarely does. A study that sets another's published runs beside its own (the same
experiments on other hardware) prices a workload it has not run yet from those runs,
before falling back on its backend's mean: a study's first desktop run is priced as the
published desktop runs, not as the twelve-minute runs that happened to finish first.
"""

from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean
from typing import NamedTuple

from reclaimstudy.campaigns import runs
from reclaimstudy.results import record
from reclaimstudy.results.record import host_wall_seconds


def _keys(backend: str, workload: str, system: str, policy: str) -> list[tuple]:
    """From the closest match to the loosest; never across backends."""
    return [(backend, workload, system, policy), (backend, workload, system), (backend, workload),
            (backend,)]


# Where a price came from: the study's own runs of the workload, the published runs of
# the study it stands beside, or the mean over every workload on the backend.
STUDY, BESIDE, BACKEND = "study", "beside", "backend"


class Priced(NamedTuple):
    seconds: float | None
    basis: str | None


@dataclass
class CostBook:
    """Wall seconds of finished runs, at each level of likeness; `current` holds the
    prepared identities (kernel, image, ...) of the sweep the book prices for, `beside`
    names the study whose published runs stand in where this one has none."""

    current: list[dict] = field(default_factory=list)
    beside: str | None = None
    # key -> (on the sweep's artefacts, a run of this study, wall seconds)
    seconds: dict[tuple, list[tuple[bool, bool, float]]] = field(default_factory=dict)

    def add(self, backend: str, workload: str, system: str, policy: str, wall_s: float,
            current: bool = False, own: bool = True):
        for key in _keys(backend, workload, system, policy):
            self.seconds.setdefault(key, []).append((current and own, own, wall_s))

    def add_record(self, record: dict, own: bool = True):
        wall = host_wall_seconds(record)
        if record.get("status") == "ok" and isinstance(wall, (int, float)) and wall > 0:
            self.add(record["backend"], record["workload_name"], record["system_name"],
                     record["policy_name"], float(wall),
                     current=(record.get("identity") or {}).get("artefacts") in self.current,
                     own=own)

    def known(self, own: bool = True) -> int:
        """How many runs of this study (or, own=False, of the study beside) the book was
        made from."""
        return sum(1 for k, v in self.seconds.items() if len(k) == 4
                   for _, mine, _ in v if mine == own)

    def workload_runs(self, backend: str, workload: str, own: bool = True) -> int:
        """How many runs of a workload (this study's, or own=False the study beside's)."""
        return sum(1 for _, mine, _ in self.seconds.get((backend, workload), []) if mine == own)

    def price(self, spec: runs.RunSpec) -> float | None:
        return self.priced(spec).seconds

    def priced(self, spec: runs.RunSpec) -> Priced:
        """This study's runs of the same workload on the sweep's artefacts, closest first;
        then on any artefacts; then the study beside's published runs of the workload;
        then the mean of all the backend's runs, this study's if it has any. That last is
        a mix of workloads, so it prefers no artefacts: the sweep's own would be whichever
        workloads happened to run on them (a sweep's only 64 MiB run so far was the
        hour-long desktop, and it priced a dozen 12-minute runs at an hour each)."""
        keys = _keys(spec.backend, spec.workload.name, spec.system.name, spec.policy.name)
        tiers = ((STUDY, lambda current, own: current), (STUDY, lambda current, own: own),
                 (BESIDE, lambda current, own: not own))
        for basis, takes in tiers:
            for key in keys[:-1]:
                found = [s for current, own, s in self.seconds.get(key, [])
                         if takes(current, own)]
                if found:
                    return Priced(mean(found), basis)
        for own in (True, False):
            found = [s for _, mine, s in self.seconds.get(keys[-1], []) if mine == own]
            if found:
                return Priced(mean(found), BACKEND)
        return Priced(None, None)


def cost_book(study_path: Path, current: list[dict] | None = None,
              beside: tuple[str, Path] | None = None) -> CostBook:
    """Every finished, good run in a study's folder; `current`: the sweep's own prepared
    identities (Prepared.identity), whose runs are preferred as prices; `beside`: the
    name and published folder of the study it stands beside, whose runs price the
    workloads this one has not run."""
    book = CostBook(current=list(current or []), beside=beside[0] if beside else None)
    for run in record.published_runs(study_path):
        book.add_record(run.record)
    if beside:
        for run in record.published_runs(beside[1]):
            book.add_record(run.record, own=False)
    return book


def remaining_seconds(book: CostBook, waiting: list[runs.RunSpec],
                      running: list[tuple[runs.RunSpec, float]], jobs: int) -> float | None:
    """Wall seconds until the sweep ends: the waiting runs' prices plus what is left of
    the running ones' (price minus time so far, at least nothing), shared by `jobs`."""
    total = 0.0
    for spec in waiting:
        price = book.price(spec)
        if price is None:
            return None
        total += price
    for spec, elapsed in running:
        price = book.price(spec)
        if price is None:
            return None
        total += max(0.0, price - elapsed)
    return total / max(1, jobs)


def duration(seconds: float) -> str:
    """A short human reading: 45 s, 12 min, 3.4 h."""
    if seconds < 100:
        return f"{seconds:.0f} s"
    if seconds < 6000:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
