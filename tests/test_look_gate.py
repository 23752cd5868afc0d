"""A sweep under a sequential rule: an experiment gets more pairs only while a row of it
is undecided; the decision itself (stopped_experiments) over finished pairs."""

import dataclasses
import threading
import time

import pandas as pd

from analysis.sequential_replay import complete_pairs, stopped_experiments
from reclaimstudy.campaigns import look_gate, sweep
from reclaimstudy.campaigns.studies import load_study
from reclaimstudy.config.verdict_rules import VerdictRules
from tests.runfactory import ebizzy_table
from tests.test_sweep_prepare import Backend, executed


def _ebizzy(baseline: list[float], off: list[float]) -> pd.DataFrame:
    return ebizzy_table("desktop-hdd-96", {"baseline": baseline, "madv-free-off": off})


RULES = VerdictRules(looks=(3, 5), spending="pocock")


def _stopped(table):
    return stopped_experiments(table, None, "baseline", RULES, {"ebizzy": 5}, {"ebizzy": 2})


def test_a_clear_effect_stops_at_the_first_look_and_a_doubtful_one_at_the_last():
    clear = _ebizzy([3968, 3970, 3965, 3972, 3966], [2717, 2720, 2716, 2719, 2715])
    assert _stopped(clear[clear["repetition"] < 3]) == {"ebizzy": 3}
    doubtful = _ebizzy([3968, 3700, 4100, 3900, 3800], [3900, 3950, 3800, 4000, 3700])
    assert _stopped(doubtful[doubtful["repetition"] < 3]) == {}     # undecided: go on
    assert _stopped(doubtful[doubtful["repetition"] < 4]) == {}     # 4 pairs: no look
    assert _stopped(doubtful) == {"ebizzy": 5}                      # the last look


def test_complete_pairs_counts_leading_repetitions_with_every_policy():
    table = _ebizzy([1, 2, 3, 4], [1, 2, 3])
    assert complete_pairs(table, {"ebizzy": 2}) == {"ebizzy": 3}
    gap = table[~((table["repetition"] == 1) & (table["policy"] == "baseline"))]
    assert complete_pairs(gap, {"ebizzy": 2}) == {"ebizzy": 1}


def test_the_gate_waits_for_the_earlier_pairs_then_skips_past_the_stop(tmp_path, monkeypatch):
    study = dataclasses.replace(load_study("seeds-gem5"), verdicts=RULES)
    unfinished = {"r2-run"}
    gate = look_gate.LookGate(study, tmp_path, unfinished,
                              {("ebizzy", "s", r): [f"r{r}-run"] for r in range(5)})
    monkeypatch.setattr(look_gate, "POLL_S", 0.02)
    monkeypatch.setattr(gate, "_stopped", lambda: {"ebizzy": 3})
    assert gate.stopped_at("ebizzy", "s", 2) is None          # before the first look
    threading.Timer(0.3, unfinished.discard, ["r2-run"]).start()
    began = time.monotonic()
    assert gate.stopped_at("ebizzy", "s", 3) == 3              # waited for r2, then skipped
    assert time.monotonic() - began >= 0.25
    assert gate.stopped_at("ebizzy", "s", 4) == 3
    monkeypatch.setattr(gate, "_stopped", lambda: {})
    assert gate.stopped_at("ebizzy", "s", 4) is None          # undecided: made


def test_a_sweep_with_looks_makes_no_run_past_its_experiments_stop(tmp_path, monkeypatch):
    study = dataclasses.replace(load_study("seeds-gem5").select(["ebizzy/*/*/*"]),
                                verdicts=RULES)
    ran = executed(monkeypatch, Backend())
    monkeypatch.setattr(look_gate.LookGate, "_stopped", lambda self: {"ebizzy": 3})
    result = sweep.run_sweep(study, "qemu", tmp_path, jobs=1)
    # ebizzy's three policies at r0-r2 are made; r3 and r4 are not needed
    assert len(ran) == 9 and result.not_needed == 6 and result.ok
    assert result.done == 15
