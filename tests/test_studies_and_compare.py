"""Study files (valid, and each kind of bad input named) and the comparison statistics."""

import json
import math

import pandas as pd
import pytest

from analysis.compare import compare, format_text, summarize
from reclaimstudy.campaigns.studies import load_study
from reclaimstudy.errors import StudyError

GOOD_EXPERIMENT = '[[experiment]]\nname = "t"\nworkload = "thrash"\npolicies = ["baseline", "mglru"]\n'


def study_file(tmp_path, head='description = "d"\nbaseline = "baseline"\nsystems = ["ci-tiny"]\n',
               body=GOOD_EXPERIMENT):
    path = tmp_path / "s.toml"
    path.write_text(head + body)
    return str(path)


def test_shipped_studies_expand_into_runs():
    smoke = load_study("smoke")
    runs = smoke.runs("qemu")
    assert len(runs) == 2 * (2 + 5 + 2)
    assert {spec.policy.name for _, spec in runs} >= {"baseline", "mglru", "madv-free-off"}
    seeds = load_study("seeds")
    assert {e.seed for e in seeds.experiments} == {"000a", "000b", "001", "002", "003", "004"}
    # repetitions vary the workload's seed where it has one
    lazy = [spec for exp, spec in seeds.runs("gem5") if exp.workload == "lazyfree"
            and spec.policy.name == "baseline"]
    assert sorted(spec.arguments["seed"] for spec in lazy) == [1, 2, 3]


@pytest.mark.parametrize("body, message", [
    (GOOD_EXPERIMENT.replace('"thrash"', '"nope"'), "unknown workload 'nope'; allowed: "),
    (GOOD_EXPERIMENT.replace('"mglru"', '"turbo"'), "unknown policy 'turbo'; allowed: baseline, "),
    (GOOD_EXPERIMENT.replace('["baseline", "mglru"]', '["mglru"]'),
     "the baseline policy 'baseline' is missing"),
    (GOOD_EXPERIMENT + 'systems = ["cray"]\n', "unknown system 'cray'"),
    (GOOD_EXPERIMENT + 'params = { rounds = 0 }\n', "parameter rounds = 0; allowed"),
    (GOOD_EXPERIMENT + 'params = { colour = 1 }\n', "unknown parameter\\(s\\) colour"),
    (GOOD_EXPERIMENT + GOOD_EXPERIMENT, "experiment name 't' is used twice"),
    (GOOD_EXPERIMENT + "repetitions = 0\n", "#1: repetitions = 0; allowed: integers 1..100"),
    (GOOD_EXPERIMENT + 'repetitions = "ten"\n', "#1: repetitions = 'ten'; allowed"),
    ("", "missing key\\(s\\) experiment"),
])
def test_bad_study_files_are_rejected_naming_file_and_value(tmp_path, body, message):
    path = study_file(tmp_path, body=body)
    with pytest.raises(StudyError, match=message) as error:
        load_study(path)
    assert "s.toml" in str(error.value)


def test_an_experiment_can_have_its_own_number_of_repetitions(tmp_path):
    other = GOOD_EXPERIMENT.replace('name = "t"', 'name = "u"')
    study = load_study(study_file(tmp_path, body=GOOD_EXPERIMENT + "repetitions = 4\n" + other))
    reps = {}
    for experiment, spec in study.runs("qemu"):
        reps.setdefault(experiment.name, set()).add((spec.policy.name, spec.repetition))
    assert reps["t"] == {(p, r) for p in ("baseline", "mglru") for r in range(4)}
    assert reps["u"] == {(p, r) for p in ("baseline", "mglru") for r in range(study.repetitions)}
    assert study.repetitions != 4  # the other experiment kept the study's number
    # raising it later only adds repetitions: the first ones are the same runs (same
    # identities), so a sweep finds them done
    more = load_study(study_file(tmp_path, body=GOOD_EXPERIMENT + "repetitions = 6\n" + other))
    assert study.points() < more.points()
    assert len(more.points() - study.points()) == 2 * 2  # r4 and r5 of t's two policies


def test_a_missing_or_unknown_baseline_is_rejected(tmp_path):
    with pytest.raises(StudyError, match="baseline = 'vanilla'; not a policy; allowed: baseline"):
        load_study(study_file(tmp_path, head='description = "d"\nbaseline = "vanilla"\n'
                                             'systems = ["ci-tiny"]\n'))
    with pytest.raises(StudyError, match="missing key\\(s\\) baseline"):
        load_study(study_file(tmp_path, head='description = "d"\nsystems = ["ci-tiny"]\n'))


def test_unknown_study_lists_the_shipped_ones():
    with pytest.raises(StudyError, match="unknown study 'nope'; allowed: .*smoke"):
        load_study("nope")


def test_summaries_use_harmonic_means_for_rates():
    assert summarize([1.0, 2.0, 4.0], rate=True)[0] == pytest.approx(3 / 1.75)
    centre, spread = summarize([1.0, 2.0, 3.0], rate=False)
    assert centre == 2.0 and spread == 1.0


def _table(values):
    rows = []
    for policy, samples in values.items():
        for rep, value in enumerate(samples):
            rows.append({"run_id": f"{policy}{rep}", "study": "s", "experiment": "e", "setup": "u1",
                         "backend": "gem5", "system": "x", "policy": policy, "workload": "w",
                         "repetition": rep, "arguments": "{}", "status": "ok",
                         "source": "workload", "phase": None, "metric": "total_s", "index": None,
                         "value": value, "unit": "s", "kind": "time", "better": "lower"})
    return pd.DataFrame(rows)


def test_comparison_on_a_table_with_known_answers():
    table = _table({"base": [1.0, 2.0, 3.0], "fast": [0.5, 1.2, 1.3], "same": [1.0, 2.0, 3.1]})
    result = compare(table, "base").set_index("policy")
    assert result.loc["base", "mean"] == 2.0 and math.isnan(result.loc["base", "p_value"])
    assert result.loc["fast", "mean"] == 1.0
    assert result.loc["fast", "change_pct"] == pytest.approx(-50.0)
    # paired by repetition: log(0.5), log(0.6), log(1.3/3); mean -0.6801, sd 0.1631, n 3,
    # t = -7.222 with 2 degrees of freedom: two-sided p = 0.01864
    assert result.loc["fast", "p_value"] == pytest.approx(0.01864, abs=1e-4)
    assert result.loc["fast", "verdict"] == "better"
    assert not result.loc["same", "significant"]
    text = format_text(compare(table, "base"), "base")
    assert text.index("base") < text.index("fast")  # baseline column first
    assert "(-50.0%)" in text


def test_significance_is_marked():
    table = _table({"base": [10.0, 10.1, 9.9, 10.0], "slow": [20.0, 20.2, 19.8, 20.1]})
    result = compare(table, "base").set_index("policy")
    assert result.loc["slow", "significant"]
    assert "(+100.2%)* worse" in format_text(compare(table, "base"), "base")
    assert result.loc["slow", "verdict"] == "worse"
    # A gauge has no better side: the change is marked significant, not read.
    gauge = table.assign(kind="gauge", better="none", unit="B/s", metric="dram_bw")
    assert "(+100.2%)*\n" in format_text(compare(gauge, "base"), "base") + "\n"
    assert compare(gauge, "base").set_index("policy").loc["slow", "verdict"] == ""


def test_a_comparison_without_the_baseline_is_an_error():
    with pytest.raises(StudyError, match="no completed run of the baseline policy 'base'"):
        compare(_table({"other": [1.0, 2.0]}), "base")


def _reproduction_for(values: dict[str, float | list[float]], period_us=100_000,
                      scans=None):
    """The seed 000b row for one hot-stream experiment whose policies measured `values`
    (one per repetition, or the same in three); `scans`: the (I, A) its classic-LRU runs
    measured, which place its idle time `period_us` in the seed's window."""
    from analysis.seeds import reproduction
    per_rep = {policy: v if isinstance(v, list) else [v] * 3 for policy, v in values.items()}
    rows = []
    for policy, measured in per_rep.items():
        for rep, value in enumerate(measured):
            metrics = {"interactive_majflt": value}
            if scans and policy != "mglru":
                metrics.update(inactive_scan_s=scans[0], active_scan_s=scans[1])
            rows += [{"experiment": "file-server", "setup": "u1", "backend": "gem5",
                      "system": "desktop-hdd", "run_id": f"{policy}-r{rep}",
                      "arguments": json.dumps({"period_us": period_us}),
                      "workload": "hot-stream", "policy": policy, "repetition": rep,
                      "metric": metric, "source": "workload", "phase": "stream",
                      "index": None, "status": "ok", "value": v}
                     for metric, v in metrics.items()]
    table = pd.DataFrame(rows)
    comparison = pd.DataFrame([
        {"experiment": "file-server", "setup": "u1", "backend": "gem5",
         "system": "desktop-hdd", "source": "workload", "metric": "interactive_majflt",
         "phase": "stream", "policy": policy, "mean": sum(v) / len(v), "p_value": 0.01}
        for policy, v in per_rep.items()])
    [row] = reproduction(comparison, table).to_dict("records")
    return row


def test_a_seed_row_carries_the_paired_verdict_of_its_repetitions():
    row = _reproduction_for({"baseline": 3.0, "exec-protect-off": 50.0})
    assert row["n_pairs"] == 3 and row["paired_ratio"] == pytest.approx(0.06)
    # the three repetitions measured the same: nothing varied, nothing concluded
    assert row["verdict"] == "inconclusive (n=3, no spread between repetitions)"


def test_seed_reproduction_directions_including_zero_and_equal_values():
    # seed 000b: 3 major faults with exec protection, 50 without (ratio < 1)
    row = _reproduction_for({"baseline": 2.0, "exec-protect-off": 8.0, "mglru": 1.0})
    assert row["direction"] == "yes" and row["ours_ratio"] == 0.25 and row["mglru_ratio"] == 0.5
    assert _reproduction_for({"baseline": 8.0, "exec-protect-off": 2.0})["direction"] == "no"
    equal = _reproduction_for({"baseline": 0.0, "exec-protect-off": 0.0})
    assert equal["direction"] == "no effect (equal)" and not equal["direction_reproduced"]
    from_zero = _reproduction_for({"baseline": 3.0, "exec-protect-off": 0.0})
    assert from_zero["direction"] == "no" and from_zero["ours_ratio"] == math.inf


def test_seed_000b_rows_outside_the_idle_window_are_judged_against_no_effect():
    # I = 0.03 s, A = 0.3 s: the seed's effect needs 0.03 <= T < 0.33
    inside = _reproduction_for({"baseline": [3, 4, 2, 3], "exec-protect-off": [40, 50, 45, 52]},
                               period_us=100_000, scans=(0.03, 0.3))
    assert inside["verdict"] == "reproduced" and inside["expected_ratio"] == inside["seed_ratio"]
    assert inside["window"] == "T 0.1 s inside the window (I 0.03 s, I + A 0.33 s)"
    # below I both policies keep the pages: equal counts are what the seed expects there
    below = _reproduction_for({"baseline": [1, 0, 1, 2], "exec-protect-off": [1, 0, 1, 2]},
                              period_us=10_000, scans=(0.03, 0.3))
    assert below["verdict"] == "equivalent, as expected" and below["expected_ratio"] == 1
    assert below["test"] == "equivalence (TOST, ±10%)" and below["row_p"] == 0
    assert below["window"].startswith("T 0.01 s below I")
    # past I + A an effect is not the seed's: it is named as such
    past = _reproduction_for({"baseline": [3, 4, 2, 3], "exec-protect-off": [40, 50, 45, 52]},
                             period_us=600_000, scans=(0.03, 0.3))
    assert past["verdict"] == "an effect where none is expected"
    assert past["window"].startswith("T 0.6 s past I + A")
    # without I and A measured (MGLRU alone, or no scan counters) the seed's ratio applies
    unplaced = _reproduction_for({"baseline": [1, 0, 1, 2], "exec-protect-off": [1, 0, 1, 2]},
                                 period_us=10_000)
    assert unplaced["window"] == "" and unplaced["verdict"].startswith("inconclusive")


def test_workload_metrics_that_stay_zero_are_still_compared():
    rows = []
    for policy in ("baseline", "off"):
        for rep in range(2):
            for source, metric in (("workload", "majflt"), ("vmstat", "pswpin")):
                rows.append({"experiment": "e", "setup": "u1", "backend": "qemu", "system": "s", "source": source,
                             "phase": "p", "metric": metric, "unit": "faults", "kind": "count", "better": "lower",
                             "policy": policy, "value": 0.0, "status": "ok", "index": None,
                             "repetition": rep})
    result = compare(pd.DataFrame(rows), "baseline")
    assert set(result["metric"]) == {"majflt"}


@pytest.mark.parametrize("change, message", [
    (('metric = "grep_s"', 'metric = "grepp_s"'),
     r"metric = 'grepp_s' is not declared by workload 'make-grep' .*allowed: make_s, grep_s"),
    (('phase = "run"', 'phase = "runn"'), r"phase = 'runn'; allowed: run"),
    (('unit = "records/s"', 'unit = "ops/s"'),
     r"unit = 'ops/s', but workload 'lazyfree' declares records_per_s in 'records/s'"),
    (('workload = "thrash"', 'workload = "thrashh"'), r"workload = 'thrashh'; allowed: "),
])
def test_a_seed_claim_must_name_a_declared_metric_phase_and_unit(tmp_path, change, message):
    from analysis.seeds import load_claims
    from reclaimstudy.paths import CONFIGS
    text = (CONFIGS / "seeds.toml").read_text()
    assert change[0] in text
    path = tmp_path / "seeds.toml"
    path.write_text(text.replace(change[0], change[1], 1))
    with pytest.raises(StudyError, match=message):
        load_claims(path)
    assert len(load_claims()) >= 9  # the shipped claims are all valid


def test_an_undeclared_metric_from_a_parser_is_an_error(tmp_path):
    from reclaimstudy.config.workloads import get_workload
    with pytest.raises(StudyError, match="reports metric 'speed', which its meta.toml does not "
                                         "declare; declared: read_s, anon_s"):
        get_workload("smoke").metric("speed")


def test_rates_are_averaged_harmonically_and_a_higher_rate_reads_better():
    rows = []
    for policy, samples in {"base": [100.0, 101.0, 99.0], "fast": [200.0, 205.0, 196.0]}.items():
        for rep, value in enumerate(samples):
            rows.append({"run_id": f"{policy}{rep}", "experiment": "e", "setup": "u1", "repetition": rep,
                         "backend": "gem5", "system": "x", "policy": policy, "status": "ok",
                         "source": "workload", "phase": None, "metric": "records_per_s",
                         "index": None, "value": value, "unit": "records/s", "kind": "rate",
                         "better": "higher"})
    result = compare(pd.DataFrame(rows), "base").set_index("policy")
    assert result.loc["base", "mean"] == pytest.approx(3 / (1 / 100 + 1 / 101 + 1 / 99))
    assert result.loc["fast", "verdict"] == "better"


def test_only_narrows_a_sweep_to_the_runs_its_patterns_name():
    from reclaimstudy.campaigns.studies import load_study
    study = load_study("seeds-gem5")
    every = study.runs("gem5")
    chosen = study.select(["thrash/*/desktop-ssd-96/r[01]", "desktop/baseline/*/r0"]).runs("gem5")
    assert [(e.name, s.policy.name, s.repetition) for e, s in chosen] == [
        ("thrash", p, r) for r in (0, 1) for p in ("baseline", "refault-scan-anon-off", "mglru")
    ] + [("desktop", "baseline", 0)]  # repetition by repetition: a cut sweep leaves pairs
    # The whole study: seed 000's five experiments (the desktop, the file server at four
    # idle times) with its control, 4 policies ten times; the other seven experiments (seed
    # 002's on one core and on four, seed 003's make-grep and make-grep-cpu) 3 policies
    # five times.
    assert len(every) == 5 * 4 * 10 + 7 * 3 * 5
    assert study.select(["desktop/*"]).points() == study.points()  # a report still wants all
    chosen_ids = {s.label() + str(s.arguments) for _, s in chosen}
    assert chosen_ids <= {s.label() + str(s.arguments) for _, s in every}


def test_only_runs_go_in_the_order_of_the_first_pattern_they_match():
    study = load_study("seeds-gem5")
    chosen = study.select(["make-grep/*/*/r4", "desktop/baseline/*/r0", "make-grep/*/*/r[3-4]",
                           "ebizzy/mglru/*/r1"]).runs("gem5")
    assert [(e.name, s.policy.name, s.repetition) for e, s in chosen] == (
        [("make-grep", p, 4) for p in ("baseline", "use-once-unmapped-off", "mglru")]
        + [("desktop", "baseline", 0)]
        + [("make-grep", p, 3) for p in ("baseline", "use-once-unmapped-off", "mglru")]
        + [("ebizzy", "mglru", 1)])  # a run two patterns name comes once, at its first


def test_a_study_file_order_puts_its_runs_first_and_keeps_every_run(tmp_path):
    other = GOOD_EXPERIMENT.replace('name = "t"', 'name = "u"')
    head = ('description = "d"\nbaseline = "baseline"\nsystems = ["ci-tiny"]\nrepetitions = 2\n'
            'order = ["u/*/*/r1", "t/mglru/*/*"]\n')
    study = load_study(study_file(tmp_path, head=head, body=GOOD_EXPERIMENT + other))
    assert [(e.name, s.policy.name, s.repetition) for e, s in study.runs("qemu")] == [
        ("u", "baseline", 1), ("u", "mglru", 1), ("t", "mglru", 0), ("t", "mglru", 1),
        # the runs no pattern names, in the study's order
        ("t", "baseline", 0), ("t", "baseline", 1), ("u", "baseline", 0), ("u", "mglru", 0)]
    # --only still narrows, in its own order
    assert [(e.name, s.repetition) for e, s in study.select(["t/baseline/*/*"]).runs("qemu")] == [
        ("t", 0), ("t", 1)]


@pytest.mark.parametrize("order, message", [
    ('["t/*/*/r7"]', "order pattern 't/\\*/\\*/r7' matches no run of study s"),
    ('"t/*"', "order = 't/\\*'; allowed: a list of run patterns"),
    ('["t/*", 3]', "order = \\['t/\\*', 3\\]; allowed: a list"),
])
def test_a_bad_study_order_is_rejected_naming_the_pattern(tmp_path, order, message):
    head = f'description = "d"\nbaseline = "baseline"\nsystems = ["ci-tiny"]\norder = {order}\n'
    with pytest.raises(StudyError, match=message) as error:
        load_study(study_file(tmp_path, head=head))
    assert "s.toml" in str(error.value)


def test_seeds_gem5_makes_every_five_repetition_run_before_any_sixth():
    runs = load_study("seeds-gem5").runs("gem5")
    repetitions = [spec.repetition for _, spec in runs]
    first_late = next(n for n, r in enumerate(repetitions) if r >= 5)
    assert max(repetitions[:first_late]) == 4 and min(repetitions[first_late:]) >= 5
    assert len(runs) == len(load_study("seeds-gem5").all_runs("gem5"))  # nothing dropped


def test_progress_and_status_name_runs_as_only_takes_them():
    # thrash and thrash-control are one workload: named by workload, their baselines clash
    study = load_study("seeds-gem5")
    names = [spec.point() for _, spec in study.runs("gem5")]
    assert len(set(names)) == len(names)
    assert "thrash-control/baseline/desktop-ssd-96/r0" in names
    assert "thrash/baseline/desktop-ssd-96/r0" in names
    picked = study.select(["thrash-control/baseline/desktop-ssd-96/r0"]).runs("gem5")
    assert [s.point() for _, s in picked] == ["thrash-control/baseline/desktop-ssd-96/r0"]


def test_only_refuses_a_pattern_that_names_no_run():
    from reclaimstudy.campaigns.studies import load_study
    with pytest.raises(StudyError, match=r"--only 'desktop/baseline/\*/r10' matches no run of "
                                         r"study seeds-gem5; runs are named experiment/policy/"
                                         r"system/rN, e\.g\. ebizzy/baseline/desktop-hdd-96/r0"):
        load_study("seeds-gem5").select(["desktop/baseline/*/r10"])


def test_wide_cells_never_run_into_the_next_column():
    """Seen in seeds-gem5: '1.499e+04 ±1.7e+031568 ±1.4e+02' for two policies' cells."""
    table = _table({"base": [14990.0, 13290.0, 16690.0], "fast": [1568.0, 1430.0, 1710.0],
                    "slow": [1.5e9, 1.7e9, 1.6e9]})
    line = next(l for l in format_text(compare(table, "base"), "base").splitlines()
                if l.startswith("  total_s"))
    cells = [c for c in line[40:].split("  ") if c.strip()]
    assert len(cells) == 3, line
    assert cells[0].strip().startswith("1.499e+04 ±") and cells[1].strip().startswith("1569 ±")


def test_a_metric_only_some_runs_have_says_over_how_many_runs_its_cell_is():
    """Seen in seeds-gem5: a disk counter added mid-study is in the stats.txt of the runs
    still on the machine alone, and its means would read as the whole policy's."""
    table = _table({"base": [1.0, 2.0, 3.0], "fast": [0.5, 1.2, 1.3]})
    later = table[table["repetition"] >= 1].assign(source="gem5", metric="disk_jumps",
                                                   unit="commands", kind="count")
    text = format_text(compare(pd.concat([table, later]), "base"), "base")
    line = {l.split()[0]: l for l in text.splitlines() if l.startswith("  ")}
    assert "[n=2]" in line["disk_jumps"] and line["disk_jumps"].count("[n=2]") == 2
    assert "[n=" not in line["total_s"]
    assert "2.5 ±0.71 [n=2]" in line["disk_jumps"]


def test_a_spread_over_an_undefined_value_is_undefined_not_an_error():
    # the statistics module's stdev raises AttributeError on [nan, 1.0]
    from analysis.compare import summarize
    centre, spread = summarize([float("nan"), 1.0], rate=False)
    assert math.isnan(centre) and math.isnan(spread)
    assert summarize([1.0, 2.0, 4.0], rate=False)[1] == pytest.approx(1.5275, abs=1e-4)


def test_an_experiment_says_why_it_runs_on_its_cpu_and_the_report_prints_it(tmp_path):
    study = load_study(study_file(tmp_path, body=GOOD_EXPERIMENT + 'cpu_why = "a check"\n'))
    assert study.experiments[0].cpu_why == "a check"
    with pytest.raises(StudyError, match=r"#1: cpu_why = ''; allowed: a sentence"):
        load_study(study_file(tmp_path, body=GOOD_EXPERIMENT + 'cpu_why = ""\n'))
    # the shipped studies: the ladder's rung says it is the rung under test, and
    # seeds-gem5's ebizzy why the timing CPU stayed
    assert all("rung under test" in e.cpu_why for e in load_study("ladder").experiments)
    ebizzy = next(e for e in load_study("seeds-gem5").experiments if e.name == "ebizzy")
    assert "outside the timing CPU's" in ebizzy.cpu_why


def test_a_published_gem5_report_names_each_experiments_cpu_and_why(tmp_path):
    import shutil

    from reclaimstudy.campaigns.publish import report_published
    from reclaimstudy.paths import REPO

    shutil.copytree(REPO / "results/published/ladder", tmp_path / "published" / "ladder")
    report = report_published(load_study("ladder"), tmp_path)
    markdown = report["markdown"].read_text()
    assert "gem5's atomic CPU: the rung under test, beside seeds-gem5's timing-CPU runs" in markdown


def test_seeds_gem5s_make_grep_cpu_gives_every_parameter_and_runs_where_its_image_is():
    """Seed 003 in its regime: every parameter but the repetition's seed is in the study
    file, so a change of make-grep-cpu's defaults cannot move its runs; they run on the
    profile whose image holds the opt-in workload, and make-grep's own row is as it was."""
    from reclaimstudy.config.workloads import get_workload
    study = load_study("seeds-gem5")
    experiment = next(e for e in study.experiments if e.name == "make-grep-cpu")
    assert set(experiment.params) == set(get_workload("make-grep-cpu").parameters) - {"seed"}
    assert experiment.params["jobs"] == "both"
    specs = [spec for e, spec in study.runs("gem5") if e.name == "make-grep-cpu"]
    assert len(specs) == 3 * 5
    assert {spec.system.name for spec in specs} == {"desktop-hdd-64-cpumake"}
    make_grep = next(e for e in study.experiments if e.name == "make-grep")
    assert make_grep.params == {"make_passes": 1} and list(make_grep.systems) == ["desktop-hdd-64"]
