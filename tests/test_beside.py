"""A study's rows beside another study's published ones (analysis/beside.py): the same
claims on other hardware, each judged alone, with the drives' own statistics."""

from types import SimpleNamespace

import pandas as pd
import pytest

from analysis.beside import (beside, beside_figure, drive_statistics, drives_markdown,
                             mglru_rows, reference_of, rows_alone, rows_markdown, side_by_side)
from analysis.published import published_dir, table_in
from reclaimstudy.campaigns.studies import parse_study
from reclaimstudy.config.verdict_rules import VerdictRules
from reclaimstudy.errors import StudyError
from reclaimstudy.paths import REPO
from reclaimstudy.results.record import published_runs
from tests.runfactory import ebizzy_table

RESULTS = REPO / "results"


def _rows(table: pd.DataFrame) -> pd.DataFrame:
    # each system its own setup, as the run identities make it
    return rows_alone(table.assign(setup=table["system"]), None, "baseline", VerdictRules())


def test_each_system_of_ours_stands_beside_the_reference_row_of_its_claim():
    reference = _rows(ebizzy_table("desktop-hdd-96", {
        "baseline": [3968, 3970, 3965, 3972, 3966], "madv-free-off": [2717, 2720, 2716, 2719, 2715]}))
    ours = _rows(pd.concat([
        # the same effect on one drive (each pair 2% faster), a smaller one on the other
        ebizzy_table("drive-a", {"baseline": [4047, 4049, 4044, 4051, 4045],
                                 "madv-free-off": [2771, 2774, 2770, 2773, 2769]}, "a-"),
        ebizzy_table("drive-b", {"baseline": [3968, 3970, 3965, 3972, 3966],
                                 "madv-free-off": [3300, 3310, 3302, 3305, 3301]}, "b-")]))
    rows = side_by_side(reference, ours)
    assert list(rows["system"]) == ["drive-a", "drive-b"]
    assert set(rows["reference_system"]) == {"desktop-hdd-96"}
    a, b = rows.to_dict("records")
    assert a["inside"] and a["same_verdict"] and a["verdict"] == "reproduced"
    assert a["reference_low"] <= a["ratio"] <= a["reference_high"]
    # drive-b's ratio (1.20) is outside the reference's interval around 1.46, the verdict
    # the same: both reproduce the seed's direction
    assert b["ratio"] == pytest.approx(1.20, abs=0.01) and not b["inside"] and b["same_verdict"]
    text = rows_markdown(rows)
    assert "desktop-hdd-96 (reference)" in text
    assert f"**{b['ratio']:.4g}**" in text and f"**{a['ratio']:.4g}**" not in text
    assert beside_figure(rows) is not None


def test_mglru_stands_beside_the_references_mglru_against_the_baseline():
    base = [3968, 3970, 3965, 3972, 3966]
    reference_table = ebizzy_table("desktop-hdd-96", {
        "baseline": base, "madv-free-off": [2717, 2720, 2716, 2719, 2715],
        "mglru": [v * 1.10 + d for v, d in zip(base, [1, -2, 3, 0, -1])]}).assign(setup="desktop-hdd-96")
    ours_table = pd.concat([
        # drive-a: MGLRU within noise of the baseline (pairs both ways); drive-b: lower
        ebizzy_table("drive-a", {"baseline": base, "madv-free-off": [2771, 2774, 2770, 2773, 2769],
                                 "mglru": [3970, 3961, 3969, 3968, 3970]}, "a-"),
        ebizzy_table("drive-b", {"baseline": base, "madv-free-off": [3300, 3310, 3302, 3305, 3301],
                                 "mglru": [v * 0.8 + d for v, d in zip(base, [2, -1, 0, 3, -2])]}, "b-")])
    ours_table["setup"] = ours_table["system"]
    theirs = mglru_rows(_rows(reference_table), reference_table, "baseline", 0.05)
    ours = mglru_rows(_rows(ours_table), ours_table, "baseline", 0.05)
    assert list(theirs["verdict"]) == ["higher"]
    assert theirs["paired_ratio"].iloc[0] == pytest.approx(1.10, abs=0.001)
    rows = side_by_side(theirs, ours)
    a, b = rows.to_dict("records")
    assert (a["system"], a["verdict"], a["inside"]) == ("drive-a", "inconclusive", False)
    assert (b["system"], b["verdict"]) == ("drive-b", "lower")
    assert b["ratio"] == pytest.approx(0.8, abs=0.001) and b["against"] == "baseline"
    assert "records_per_s [arena-t1], mglru / baseline" in rows_markdown(rows)
    # an experiment without MGLRU has no MGLRU row, nor a claim whose "on" policy is not
    # the study's baseline
    plain = ebizzy_table("x", {"baseline": base, "madv-free-off": base}).assign(setup="x")
    assert mglru_rows(_rows(plain), plain, "baseline", 0.05).empty
    assert mglru_rows(_rows(ours_table), ours_table, "madv-free-off", 0.05).empty


def test_a_claim_the_reference_lacks_has_no_row():
    reference = _rows(ebizzy_table("desktop-hdd-96", {"baseline": [1, 2], "madv-free-off": [1, 2]}))
    other = ebizzy_table("drive-a", {"baseline": [3, 4, 5], "madv-free-off": [2, 3, 4]}, "a-")
    other["experiment"] = "ebizzy-4core"
    assert side_by_side(reference, _rows(other)).empty
    assert beside_figure(pd.DataFrame()) is None


def _gem5_rows(run_id: str, policy: str, phases: dict[str, dict[str, float]]) -> list[dict]:
    return [{"run_id": run_id, "experiment": "make-grep", "system": "drive-a", "policy": policy,
             "status": "ok", "source": "gem5", "phase": phase, "metric": metric, "value": value}
            for phase, metrics in phases.items() for metric, value in metrics.items()]


def test_drive_statistics_sum_a_runs_phases_and_average_its_policys_runs():
    rows = (_gem5_rows("r0", "baseline", {"p1": {"disk_reads": 10, "disk_seek_ticks": 2e9},
                                          "p2": {"disk_reads": 5, "disk_seek_ticks": 1e9}})
            + _gem5_rows("r1", "baseline", {"p1": {"disk_reads": 20, "disk_seek_ticks": 4e9}})
            + _gem5_rows("r2", "mglru", {"p1": {"disk_reads": 7, "ipc": 0.5}}))
    stats = drive_statistics(pd.DataFrame(rows)).set_index("policy")
    # baseline: runs of 15 and 20 reads, 3 and 4 ms seeking; ipc is not the drive's
    assert stats.loc["baseline", "reads"] == pytest.approx(17.5)
    assert stats.loc["baseline", "seek_ms"] == pytest.approx(3.5)
    assert stats.loc["baseline", "runs"] == 2 and "ipc" not in stats
    # a statistic one policy's runs never counted is missing there, not zero
    assert stats.loc["mglru", "reads"] == 7 and pd.isna(stats.loc["mglru", "seek_ms"])
    # a model that counts no rotation has no column for it
    assert "rotation_ms" not in stats
    text = drives_markdown(stats.reset_index().assign(study="x"))
    assert "| make-grep | drive-a | mglru | 1 | 7 | - |" in text
    # large sums read whole, with thousands separators
    big = drives_markdown(stats.reset_index().assign(reads=[276_849.6, 7]))
    assert "| 276,850 |" in big and "e+05" not in big


def test_a_study_beside_one_not_yet_published_says_so(tmp_path):
    study = SimpleNamespace(name="disksim", beside="seeds-gem5")
    assert reference_of(SimpleNamespace(name="x", beside=None), tmp_path / "published") is None
    missing = reference_of(study, tmp_path / "published")
    assert missing == {"name": "seeds-gem5", "table": None, "runs": []}


def test_the_study_file_names_a_study_that_exists(tmp_path):
    table = {"description": "d", "baseline": "baseline", "beside": "no-such-study",
             "experiment": [{"name": "e", "workload": "lazyfree", "policies": ["baseline"],
                             "systems": ["desktop-hdd-96"]}]}
    with pytest.raises(StudyError, match="beside.*not a study; allowed: .*seeds-gem5"):
        parse_study("x", table, tmp_path / "x.toml")
    table["beside"] = "seeds-gem5"
    assert parse_study("x", table, tmp_path / "x.toml").beside == "seeds-gem5"


def test_the_published_make_grep_on_another_drive_name_matches_itself():
    """The published seeds-gem5 make-grep rows, relabelled as another system's, stand
    beside the published ones inside their intervals, with the same verdicts and the
    analytic model's drive statistics on both sides."""
    target = published_dir("seeds-gem5", RESULTS)
    if not (target / "report" / "table.parquet").is_file():
        pytest.skip(f"{target}: seeds-gem5 is not published in this checkout")
    table = table_in(target)
    ours = table[table["experiment"] == "make-grep"].assign(system="drive-a")
    wanted = set(ours["run_id"])
    kept = [run for run in published_runs(target, "seeds-gem5") if run.record["run_id"] in wanted]
    study = SimpleNamespace(name="disksim", beside="seeds-gem5", baseline="baseline",
                            verdicts=VerdictRules())
    shown = beside(study, ours, kept, reference_of(study, RESULTS / "published"))
    rows = shown["rows"]
    assert set(rows["experiment"]) == {"make-grep"} and len(rows) == 2
    assert rows["inside"].all() and rows["same_verdict"].all()
    assert (rows["ratio"] == rows["reference_ratio"]).all()
    drives = shown["drives"]
    assert set(drives["system"]) == {"desktop-hdd-64", "drive-a"}
    assert set(drives["study"]) == {"seeds-gem5", "disksim"}
    by_side = drives.set_index(["system", "policy"])
    assert by_side.loc[("drive-a", "baseline"), "reads"] == by_side.loc[("desktop-hdd-64", "baseline"), "reads"]
