"""`./study pairs`: one metric repetition by repetition, and its paired ratios."""

import pandas as pd
import pytest

from analysis.paired import paired
from analysis.pairs import experiment_rows, format_pairs, metric_pairs
from reclaimstudy.cli import main
from reclaimstudy.errors import StudyError

# repetition -> value, per policy, of two phases' and the whole run's metrics
READS = {"baseline": [983, 980, 981], "off": [1046, 1043, 1044], "mglru": [1033, 1062, 1043]}


def _rows(experiment="iozone", system="hdd-96", backend="gem5"):
    rows = []
    for policy, values in READS.items():
        for repetition, value in enumerate(values):
            common = dict(experiment=experiment, system=system, backend=backend, status="ok",
                          policy=policy, repetition=repetition, run_id=f"{policy}-r{repetition}")
            rows += [dict(common, source="gem5", phase="pass2", metric="disk_reads",
                          value=float(value), unit="commands", kind="count"),
                     dict(common, source="gem5", phase="pass1", metric="disk_reads",
                          value=float(value) / 2, unit="commands", kind="count"),
                     dict(common, source="workload", phase=None, metric="disk_reads",
                          value=1.0, unit="commands", kind="count"),
                     dict(common, source="gem5", phase="pass1", metric="ipc",
                          value=0.5, unit="ratio", kind="ratio")]
    return pd.DataFrame(rows)


def test_values_are_laid_out_by_repetition_with_the_baseline_first_and_paired_by_repetition():
    result = metric_pairs(experiment_rows(_rows(), "iozone", None), "pass2:disk_reads", "off")
    assert result.label == "gem5:pass2:disk_reads"
    assert list(result.values.columns) == ["off", "baseline", "mglru"]
    assert result.values.loc[1, "mglru"] == 1062
    expected = paired(dict(enumerate(READS["baseline"])), dict(enumerate(READS["off"])))
    assert result.ratios["baseline"] == expected
    text = format_pairs(result)
    assert "977" not in text and "980-983" in text and "1,033-1,062" in text
    assert f"baseline / off: {expected.ratio:.4g}" in text


def test_an_empty_phase_names_the_whole_run_and_a_full_name_its_source():
    rows = experiment_rows(_rows(), "iozone", None)
    assert metric_pairs(rows, "workload::disk_reads", "off").label == "workload::disk_reads"
    assert metric_pairs(rows, "gem5:pass1:disk_reads", "off").values.loc[0, "off"] == 523


def test_a_star_phase_sums_a_count_over_each_runs_phases_and_refuses_a_ratio():
    rows = experiment_rows(_rows(), "iozone", None)
    result = metric_pairs(rows, "gem5:*:disk_reads", "baseline")
    assert result.label == "gem5:*:disk_reads"
    assert result.values.loc[1, "mglru"] == 1062 + 531  # pass2 and pass1; not the run's row
    assert result.ratios["off"] == paired(
        {r: 1.5 * v for r, v in enumerate(READS["off"])},
        {r: 1.5 * v for r, v in enumerate(READS["baseline"])})
    # the run's own row (phase None) is not a phase: the shorter form finds gem5's alone
    assert metric_pairs(rows, "*:disk_reads", "baseline").label == "gem5:*:disk_reads"
    with pytest.raises(StudyError, match=r"'gem5:\*:ipc': a ratio does not add up over phases"):
        metric_pairs(rows, "gem5:*:ipc", "baseline")
    with pytest.raises(StudyError, match=r"'workload:\*:disk_reads': no phase of this "
                                         r"experiment has it"):
        metric_pairs(rows, "workload:*:disk_reads", "baseline")


def test_a_star_sum_of_a_run_missing_a_phase_is_missing_not_small():
    rows = experiment_rows(_rows(), "iozone", None)
    rows = rows[~((rows["run_id"] == "off-r1") & (rows["phase"] == "pass1")
                  & (rows["metric"] == "disk_reads"))]
    result = metric_pairs(rows, "gem5:*:disk_reads", "baseline")
    assert pd.isna(result.values.loc[1, "off"])
    assert result.values.loc[0, "off"] == 1.5 * 1046
    assert result.ratios["off"].n == 2  # the pair with the short run is left out
    assert "-" in format_pairs(result).splitlines()[3].split()


def test_a_metric_that_fits_several_is_refused_naming_each():
    with pytest.raises(StudyError, match="fits 3 .*gem5:pass1:disk_reads, gem5:pass2:disk_reads, "
                                         "workload::disk_reads"):
        metric_pairs(experiment_rows(_rows(), "iozone", None), "disk_reads", "off")


def test_an_unknown_metric_is_refused_with_the_closest_names():
    with pytest.raises(StudyError, match="'pass3:disk_reads': not in .*gem5:pass2:disk_reads"):
        metric_pairs(experiment_rows(_rows(), "iozone", None), "pass3:disk_reads", "off")
    with pytest.raises(StudyError, match="write it as metric"):
        metric_pairs(experiment_rows(_rows(), "iozone", None), "a:b:c:d", "off")


def test_a_baseline_without_runs_is_refused_listing_the_policies():
    with pytest.raises(StudyError, match="'classic': .*baseline, mglru, off"):
        metric_pairs(experiment_rows(_rows(), "iozone", None), "pass2:disk_reads", "classic")


def test_backends_are_never_pooled_and_two_systems_need_a_choice():
    both = pd.concat([_rows(), _rows(backend="qemu")])
    with pytest.raises(StudyError, match="gem5, qemu; they are never compared"):
        experiment_rows(both, "iozone", None)
    two = pd.concat([_rows(), _rows(system="ssd-96")])
    with pytest.raises(StudyError, match="2 systems; choose one with --system: hdd-96, ssd-96"):
        experiment_rows(two, "iozone", None)
    assert set(experiment_rows(two, "iozone", "ssd-96")["system"]) == {"ssd-96"}
    with pytest.raises(StudyError, match="experiment 'make': not in the table; it has iozone"):
        experiment_rows(two, "make", None)


def test_the_command_reads_the_published_table(tmp_path, capsys):
    report = tmp_path / "published" / "smoke" / "report"
    report.mkdir(parents=True)
    _rows().to_parquet(report / "table.parquet")
    assert main(["pairs", "smoke", "iozone", "pass2:disk_reads", "--published",
                 "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("gem5:pass2:disk_reads (commands)") and "off / baseline" in out
    # without a published table it says what to run
    assert main(["pairs", "smoke", "iozone", "x", "--published",
                 "--results", str(tmp_path / "none")]) == 2
    assert "./study publish smoke" in capsys.readouterr().err


def test_counts_print_whole_and_fractions_to_four_digits():
    rows = _rows()
    rows.loc[rows["metric"] == "disk_reads", "value"] *= 33  # 32,439 and more
    text = format_pairs(metric_pairs(experiment_rows(rows, "iozone", None),
                                     "pass2:disk_reads", "baseline"))
    assert "32,439" in text and "e+" not in text
    half = format_pairs(metric_pairs(experiment_rows(_rows(), "iozone", None),
                                     "pass1:disk_reads", "baseline"))
    assert "491.5" in half  # 983 / 2


def test_wide_values_keep_their_columns_apart():
    rows = _rows()
    rows.loc[rows["metric"] == "disk_reads", "value"] *= 7e9  # like disk ticks: 16 digits
    result = metric_pairs(experiment_rows(rows, "iozone", None), "pass2:disk_reads", "baseline")
    ranges = {"baseline": "6,860,000,000,000-6,881,000,000,000",
              "off": "7,301,000,000,000-7,322,000,000,000",
              "mglru": "7,231,000,000,000-7,434,000,000,000"}
    *_, last_range, _, _ = format_pairs(result).splitlines()
    assert last_range.split() == ["range"] + [ranges[p] for p in result.values.columns]


def test_where_the_baseline_counts_nothing_the_pairs_mean_difference_is_printed():
    rows = _rows()
    pass2 = rows["phase"] == "pass2"
    rows.loc[pass2 & (rows["policy"] == "baseline"), "value"] = 0.0  # no refaults at all
    text = format_pairs(metric_pairs(experiment_rows(rows, "iozone", None),
                                     "pass2:disk_reads", "baseline"))
    off = [line for line in text.splitlines() if line.startswith("  off - baseline")][0]
    # off's 1046, 1043, 1044 against nothing: +1,044 on average, the t-interval of the
    # mean difference (1,044.3 +- 4.303 * 1.528 / sqrt 3 = [1,040.5, 1,048.1]), and no
    # ratio (it could say only "more")
    assert off.endswith("no ratio, baseline is 0 in every pair")
    assert "inf" not in off
    low, high = (float(v.replace(",", "")) for v in
                 off.split("mean difference +1,044 [")[1].split("]")[0].split(", "))
    assert (low, high) == (1041, 1048)  # printed whole
    plain = format_pairs(metric_pairs(experiment_rows(_rows(), "iozone", None),
                                      "pass2:disk_reads", "baseline"))
    assert "mean difference" not in plain  # all positive: the log ratio says it


def test_where_neither_side_counts_anything_no_ratio_is_printed():
    rows = _rows()
    pass2 = rows["phase"] == "pass2"
    rows.loc[pass2 & rows["policy"].isin(["baseline", "off"]), "value"] = 0.0
    text = format_pairs(metric_pairs(experiment_rows(rows, "iozone", None),
                                     "pass2:disk_reads", "baseline"))
    off = [line for line in text.splitlines() if line.startswith("  off")][0]
    assert off == "  off, baseline: 0 in every pair (3 pairs)"
    mglru = [line for line in text.splitlines() if line.startswith("  mglru")][0]
    assert "no ratio, baseline is 0 in every pair" in mglru


def test_a_ratio_whose_interval_is_open_above_says_why():
    rows = _rows()
    pass2 = rows["phase"] == "pass2"
    baseline = pass2 & (rows["policy"] == "baseline")
    # the baseline counts nothing in two of its three pairs, a little in the third
    rows.loc[baseline & (rows["repetition"] != 0), "value"] = 0.0
    rows.loc[baseline & (rows["repetition"] == 0), "value"] = 10.0
    text = format_pairs(metric_pairs(experiment_rows(rows, "iozone", None),
                                     "pass2:disk_reads", "baseline"))
    off = [line for line in text.splitlines() if line.startswith("  off / baseline")][0]
    assert ", inf]" in off
    assert off.endswith("the ratio's interval is open above: baseline is 0 in some pairs")
    plain = format_pairs(metric_pairs(experiment_rows(_rows(), "iozone", None),
                                      "pass2:disk_reads", "baseline"))
    assert "open above" not in plain
