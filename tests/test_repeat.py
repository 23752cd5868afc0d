"""`study repeat`: a published run made again is compared value for value, and only
published runs can be repeated."""

import math

import pandas as pd
import pytest

from reclaimstudy.campaigns import runs
from reclaimstudy.campaigns.repeat import (Repeated, check_selection, describe, differences,
                                           newer_metrics, note_builds)
from reclaimstudy.campaigns.studies import load_study
from reclaimstudy.campaigns.sweep import repeated_builds
from reclaimstudy.errors import StudyError


def rows(values):
    return pd.DataFrame([{"source": "gem5", "phase": phase, "metric": metric, "index": math.nan,
                          "value": value} for (phase, metric), value in values.items()])


PUBLISHED = {("fill", "cycles"): 100.0, ("fill", "ipc"): 0.5, (None, "memory"): 96.0,
             ("fill", "quiet"): math.nan}


def test_an_identical_run_repeats_even_with_empty_values_and_keys():
    moved = differences(rows(PUBLISHED), rows(PUBLISHED))
    assert moved.empty
    assert describe("run-a", moved, 4) == "run-a: repeats (all 4 values identical)"


def test_moved_missing_and_new_values_are_all_named_largest_change_first():
    again = {**PUBLISHED, ("fill", "cycles"): 113.0, ("fill", "ipc"): 0.5001,
             ("late", "cycles"): 7.0}
    del again[(None, "memory")]
    moved = differences(rows(PUBLISHED), rows(again))
    assert sorted(zip(moved["phase"], moved["metric"])) == [
        ("", "memory"), ("fill", "cycles"), ("fill", "ipc"), ("late", "cycles")]
    line = describe("run-a", moved, 5)
    assert line.startswith("run-a: DIFFERS in 4 of 5 values; most: cycles (fill) 100 published, "
                           "113 now (+13.00%)")


def test_metrics_the_table_learnt_after_publishing_are_set_apart_not_counted_as_differing():
    again = {**PUBLISHED, ("fill", "disk_jumps"): 40.0, ("late", "disk_jumps"): 2.0}
    assert newer_metrics(rows(PUBLISHED), rows(again)) == ["disk_jumps"]
    moved = differences(rows(PUBLISHED), rows(again))
    assert moved.empty
    assert describe("run-a", moved, 4, ["disk_jumps"]) == (
        "run-a: repeats (all 4 values identical); not compared: disk_jumps (the table learnt "
        "them after this run was published)")
    # a metric the published run has is compared in every phase, a new phase's too
    again[("late", "cycles")] = 7.0
    assert list(differences(rows(PUBLISHED), rows(again))["phase"]) == ["late"]


class Backend:
    name = "qemu"

    def identity(self, spec):
        return {"kernel": "k", "image": spec.system.name}


def test_only_published_runs_can_be_repeated():
    study = load_study("seeds-gem5").select(["ebizzy/*/*/r0"])
    plan = study.runs("qemu")
    published = [runs.run_id(spec, Backend().identity(spec)) for _, spec in plan]
    with pytest.raises(StudyError, match=r"ebizzy/mglru/desktop-hdd-96/r0 .* is not published"):
        check_selection(study, Backend(), pd.DataFrame({"run_id": published[:-1]}))
    check_selection(study, Backend(), pd.DataFrame({"run_id": published}))  # nothing to say


def test_a_build_that_repeated_a_run_exactly_is_noted_and_one_that_differed_is_not(tmp_path):
    moved = differences(rows(PUBLISHED), rows({**PUBLISHED, ("fill", "cycles"): 101.0}))
    found = {"run-a": Repeated(moved.iloc[0:0], 176, [], "sha-good"),
             "run-b": Repeated(moved, 176, [], "sha-bad"),
             "run-c": Repeated(moved.iloc[0:0], 40, [], None)}  # QEMU: no gem5 build
    assert note_builds(tmp_path / "study", found) == ["sha-good"]
    noted = repeated_builds(tmp_path / "study")
    assert list(noted) == ["sha-good"]
    assert {k: noted["sha-good"][k] for k in ("run_id", "values")} == \
        {"run_id": "run-a", "values": 176}
    # a second build checked later is added beside the first
    note_builds(tmp_path / "study", {"run-d": Repeated(moved.iloc[0:0], 54, [], "sha-next")})
    assert sorted(repeated_builds(tmp_path / "study")) == ["sha-good", "sha-next"]
