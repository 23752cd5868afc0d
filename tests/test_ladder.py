"""The fidelity ladder: a cheaper CPU's paired ratios beside the timing CPU's, and when
the rung may stand in for it."""

from types import SimpleNamespace

import pandas as pd
import pytest

from analysis.ladder import compare_rungs, format_ladder
from reclaimstudy.config.systems import get_system
from reclaimstudy.config.verdict_rules import VerdictRules
from tests.runfactory import ebizzy_table


def _table(system: str, baseline: list[float], off: list[float]) -> pd.DataFrame:
    """ebizzy's records/s (seed 002's claim: baseline with MADV_FREE, madv-free-off
    without) for each repetition."""
    return ebizzy_table(system, {"baseline": baseline, "madv-free-off": off}, f"{system}-")


def _runs(table: pd.DataFrame, cpu_seconds: float) -> list:
    return [SimpleNamespace(record={"status": "ok", "experiment": "ebizzy",
                                    "backend_info": {"cpu_seconds": cpu_seconds}})
            for _ in table["run_id"].unique()]


TIMING = _table("desktop-hdd-96", [3968, 3970, 3965, 3972, 3966], [2717, 2720, 2716, 2719, 2715])


def test_a_rung_whose_ratio_lies_in_the_timing_cpus_interval_may_stand_in():
    atomic = _table("desktop-hdd-96-atomic", [4410, 4415, 4409, 4413, 4411],
                    [3020, 3024, 3019, 3022, 3021])
    result = compare_rungs(TIMING, _runs(TIMING, 240.0), atomic, _runs(atomic, 120.0),
                           "baseline", VerdictRules())
    [row] = result.to_dict("records")
    assert row["reference_low"] <= row["ratio"] <= row["reference_high"]
    assert row["inside"] and row["same_verdict"] and row["may_stand_in"]
    assert row["verdict"] == row["reference_verdict"] == "reproduced"
    assert row["speed_up"] == pytest.approx(2.0)
    assert "ebizzy: the rung may stand in for the timing CPU" in format_ladder(result)


def test_a_rung_that_moves_the_ratio_or_the_verdict_may_not():
    # the atomic CPU computes faster, so MADV_DONTNEED's extra faults weigh less: 1.2x
    moved = _table("desktop-hdd-96-atomic", [4410, 4415, 4409, 4413, 4411],
                   [3675, 3679, 3674, 3677, 3676])
    [row] = compare_rungs(TIMING, _runs(TIMING, 240.0), moved, _runs(moved, 120.0),
                          "baseline", VerdictRules()).to_dict("records")
    assert not row["inside"] and row["same_verdict"] and not row["may_stand_in"]
    # no effect at all on the rung: the verdict is not the same either
    flat = _table("desktop-hdd-96-atomic", [4410, 4400, 4420, 4405, 4415],
                  [4412, 4405, 4409, 4416, 4404])
    [row] = compare_rungs(TIMING, _runs(TIMING, 240.0), flat, _runs(flat, 120.0),
                          "baseline", VerdictRules()).to_dict("records")
    assert row["verdict"] == "inconclusive" and not row["same_verdict"]
    assert not row["may_stand_in"]


def test_the_ladders_cheaper_profiles_differ_from_the_timing_ones_only_in_the_cpu_model():
    for memory in (64, 96):
        timing = get_system(f"desktop-hdd-{memory}").model_dump(exclude={"name", "path",
                                                                          "description"})
        atomic = get_system(f"desktop-hdd-{memory}-atomic").model_dump(
            exclude={"name", "path", "description"})
        assert atomic["cpu"].pop("model") == "atomic" and timing["cpu"].pop("model") == "timing"
        assert atomic == timing


def test_a_rung_with_fewer_pairs_than_the_timing_cpu_is_not_judged_yet_unless_already_outside():
    # two pairs: an interval too wide for a verdict, the ratio inside the timing CPU's
    early = _table("desktop-hdd-96-atomic", [4560, 4208.8], [3000, 3000])
    result = compare_rungs(TIMING, _runs(TIMING, 240.0), early, _runs(early, 120.0),
                           "baseline", VerdictRules())
    [row] = result.to_dict("records")
    assert (row["pairs"], row["reference_pairs"]) == (2, 5) and not row["may_stand_in"]
    assert "ebizzy: no decision yet (2 of 5 pairs on the rung)" in format_ladder(result)
    # already outside at two pairs: more pairs narrow the interval, they cannot bring
    # the ratio into the timing CPU's
    moved = _table("desktop-hdd-96-atomic", [4410, 4415], [3675, 3679])
    result = compare_rungs(TIMING, _runs(TIMING, 240.0), moved, _runs(moved, 120.0),
                           "baseline", VerdictRules())
    assert "ebizzy: the rung may not stand in for the timing CPU" in format_ladder(result)
