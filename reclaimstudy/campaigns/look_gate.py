"""A sweep under a study's sequential rule ([verdicts] looks): a run whose repetition is
at or past one of its experiment's looks is made only if the experiment is not yet
decided at that look (analysis/sequential_replay.stopped_experiments, over the study's
finished runs). Before judging, the gate waits for the experiment's runs of the earlier
repetitions that this sweep is still making, so a look sees every pair it counts.
"""

import threading
import time
from pathlib import Path

from reclaimstudy.campaigns.studies import Study

POLL_S = 10.0


class LookGate:
    def __init__(self, study: Study, study_path: Path, unfinished: set[str],
                 run_ids: dict[tuple[str, str, int], list[str]]):
        """`unfinished`: ids of this sweep's runs not yet finished (the sweep removes
        them as they end); `run_ids`: (experiment, system, repetition) -> its runs' ids."""
        self.study, self.study_path = study, study_path
        self.unfinished, self.run_ids = unfinished, run_ids
        self.experiments = {e.name: e for e in study.experiments}
        self._lock = threading.Lock()
        self._judged: tuple[frozenset, dict] | None = None

    def looks(self, experiment: str) -> tuple[int, ...]:
        from analysis.sequential_replay import experiment_looks
        spec = self.experiments[experiment]
        return experiment_looks(self.study.verdicts.looks or (), self.study.repetitions_of(spec))

    def stopped_at(self, experiment: str, system: str, repetition: int) -> int | None:
        """The pairs the experiment stopped at, when this repetition is past them;
        None: the run is wanted."""
        passed = [n for n in self.looks(experiment) if n <= repetition]
        if not passed:
            return None
        earlier = [i for r in range(passed[-1])
                   for i in self.run_ids.get((experiment, system, r), [])]
        while any(i in self.unfinished for i in earlier):
            time.sleep(POLL_S)
        stop = self._stopped().get(experiment)
        return stop if stop is not None and repetition >= stop else None

    def _stopped(self) -> dict[str, int]:
        """The study's stopped experiments, judged again only when runs have finished."""
        from analysis.regimes import regime_checks
        from analysis.sequential_replay import stopped_experiments
        from analysis.table import study_folder_table

        with self._lock:
            finished = frozenset(p.parent.name for p in self.study_path.glob("*/run.json"))
            if self._judged and self._judged[0] == finished:
                return self._judged[1]
            if not finished:
                return {}
            kept, table = study_folder_table(self.study, self.study_path)
            stopped = stopped_experiments(
                table, regime_checks(table, kept), self.study.baseline, self.study.verdicts,
                {name: self.study.repetitions_of(e) for name, e in self.experiments.items()},
                {name: len(e.policies) for name, e in self.experiments.items()})
            self._judged = (finished, stopped)
            return stopped
