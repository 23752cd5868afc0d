"""Regime checks ([regime] in a workload's meta.toml): a run that meets its seed's
regime and one that does not, the declaration's errors, and the report's marks."""

import math
import re
import shutil

import numpy as np
import pytest
from scipy import stats

from analysis.regimes import regime_checks
from analysis.table import current_runs, runs_table, study_runs
from reclaimstudy.config.workloads import get_workload, parse_workload
from reclaimstudy.errors import StudyError
from tests.runfactory import make_record, write_run


def desktop_run(study_dir, policy, repetition, pswpin):
    workload = get_workload("desktop-launch")  # the arguments a study gives a repetition
    arguments = workload.arguments({"seed": workload.parameters["seed"].default + repetition})
    record = make_record(study="regimes", workload="desktop-launch", policy=policy,
                         system="desktop-hdd-128", repetition=repetition,
                         experiment="desktop", arguments=arguments)
    summary = {"event": "record", "kind": "summary", "total_s": 40.0, "d_pgmajfault": 9,
               "d_pswpin": pswpin, "d_pswpout": 1}
    write_run(study_dir, record, events=[summary])
    return record["run_id"]


def make_grep_run(study_dir, policy, repetition, make_s, grep_s):
    workload = get_workload("make-grep")
    arguments = workload.arguments({"seed": workload.parameters["seed"].default + repetition})
    record = make_record(study="regimes", workload="make-grep", policy=policy,
                         system="desktop-hdd-64", repetition=repetition,
                         experiment="make-grep", arguments=arguments)
    job = {"event": "record", "majflt": 3, "files": 10, "mib": 1}
    write_run(study_dir, record, events=[
        {"event": "phase", "name": "run"},
        dict(job, kind="make", seconds=make_s, compiles=4, compile_cpu_s=0.5),
        dict(job, kind="grep", seconds=grep_s),
        {"event": "record", "kind": "summary", "seconds": max(make_s, grep_s),
         "d_pgmajfault": 6, "d_refault_file": 1, "d_pgactivate": 2}])
    return record["run_id"]


def thrash_run(study_dir, policy, repetition, refaults, experiment="thrash", seconds=None):
    """A thrash run whose rounds (of a 10 MiB file: 2,560 pages) refault `refaults` pages
    each and take `seconds` each (0.1 s unless given)."""
    workload = get_workload("thrash")
    record = make_record(study="regimes", workload="thrash", policy=policy,
                         system="desktop-ssd-96", repetition=repetition,
                         experiment=experiment, arguments=workload.arguments({}))
    seconds = seconds or [0.1] * len(refaults)
    rounds = [{"event": "record", "kind": "round", "round": i, "seconds": t, "file_mib": 10,
               "d_refault_file": r, "d_pgmajfault": r, "d_pswpout": 0}
              for i, (r, t) in enumerate(zip(refaults, seconds))]
    write_run(study_dir, record, events=[{"event": "phase", "name": "access"}, *rounds])
    return record["run_id"]


def checks(study_dir):
    kept, _, _ = current_runs(study_runs(study_dir, "regimes"))
    return regime_checks(runs_table(kept), kept).set_index("run_id")


def test_a_baseline_short_of_its_seeds_swap_ins_is_out_of_regime(tmp_path):
    study = tmp_path / "regimes"
    memory_pages = 128 * 256  # desktop-hdd-128
    thrashing = desktop_run(study, "baseline", 0, 4 * memory_pages)
    mild = desktop_run(study, "baseline", 1, memory_pages // 2)
    desktop_run(study, "exec-protect-off", 0, 10)  # the regime is the baseline's
    rows = checks(study)
    assert list(rows.index) == [thrashing, mild] or set(rows.index) == {thrashing, mild}
    assert rows.loc[thrashing, "in_regime"] and rows.loc[thrashing, "multiple"] == 4.0
    assert not rows.loc[mild, "in_regime"] and rows.loc[mild, "multiple"] == 0.5
    assert rows.loc[mild, "required"] == 3 * memory_pages


def test_a_make_that_runs_on_alone_after_the_scan_is_out_of_seed_003s_regime(tmp_path):
    study = tmp_path / "regimes"
    side_by_side = make_grep_run(study, "baseline", 0, make_s=5.0, grep_s=6.0)  # 5/6 = 0.83
    grep_longer = make_grep_run(study, "use-once-unmapped-off", 0, make_s=4.0, grep_s=5.0)
    alone = make_grep_run(study, "use-once-unmapped-off", 1, make_s=5.664, grep_s=2.945)
    rows = checks(study)
    assert set(rows.index) == {side_by_side, grep_longer, alone}  # every policy's runs
    assert rows.loc[side_by_side, "in_regime"]
    assert rows.loc[grep_longer, "in_regime"] and rows.loc[grep_longer, "value"] == 0.8
    assert not rows.loc[alone, "in_regime"]
    assert rows.loc[alone, "value"] == pytest.approx(2.945 / 5.664)
    # A plain threshold: the same on any guest, and not a multiple of its memory.
    assert rows.loc[alone, "required"] == 0.8 and not rows.loc[alone, "per_memory"]
    assert rows.loc[alone, "multiple"] == rows.loc[alone, "value"]


def test_seed_001s_file_must_thrash_without_its_change_in_either_experiment(tmp_path):
    study = tmp_path / "regimes"
    # Late rounds are the second half: rounds 2 and 3 here.
    thrashing = thrash_run(study, "old-refault-distance-scan-anon-off", 0,
                           [100, 2560, 2560, 1280], experiment="thrash-control")
    cached = thrash_run(study, "refault-scan-anon-off", 0, [100, 2560, 0, 0])
    thrash_run(study, "baseline", 0, [100, 0, 0, 0])  # the seed's "after": not checked
    rows = checks(study)
    assert set(rows.index) == {thrashing, cached}
    assert rows.loc[thrashing, "value"] == 0.75 and rows.loc[thrashing, "in_regime"]
    assert rows.loc[cached, "value"] == 0 and not rows.loc[cached, "in_regime"]
    assert rows.loc[cached, "regime_policy"] == (
        "refault-scan-anon-off and old-refault-distance-scan-anon-off")


def test_a_regime_names_policies_that_exist(tmp_path):
    source = get_workload("thrash").directory
    for bad, message in (('policy = ["baseline", "nope"]', r"policy 'nope' is not a policy; "
                                                           r"allowed: .*baseline"),
                         ("policy = 3", r"policy = 3; allowed: a policy's name or a list")):
        directory = tmp_path / str(len(bad)) / "thrash"
        shutil.copytree(source, directory)
        meta = (directory / "meta.toml").read_text()
        (directory / "meta.toml").write_text(re.sub(r"^policy = .*$", bad, meta, flags=re.M))
        with pytest.raises(StudyError, match=message):
            parse_workload(directory)


def test_a_regime_must_name_a_declared_metric_a_unit_and_a_positive_multiple(tmp_path):
    source = get_workload("desktop-launch").directory
    for bad, message in (
            ('metric = "nope"', r"metric = 'nope' is not declared in \[metrics\]"),
            ('unit = "GiB"', r"unit = 'GiB'; allowed: pages, MiB"),
            ("at_least_memory = 0", r"at_least_memory = 0; allowed: a number > 0")):
        directory = tmp_path / bad.split()[0] / "desktop-launch"
        shutil.copytree(source, directory)
        meta = (directory / "meta.toml").read_text()
        head, regime = meta.split("[regime]")
        key = bad.split(" = ")[0]
        regime = re.sub(rf"^{key} = .*$", bad, regime, flags=re.M)
        (directory / "meta.toml").write_text(head + "[regime]" + regime)
        with pytest.raises(StudyError, match=message):
            parse_workload(directory)


def test_a_plain_regime_threshold_excludes_a_multiple_of_memory_and_its_unit(tmp_path):
    source = get_workload("make-grep").directory
    for name, extra, message in (
            ("both", "at_least_memory = 1.0\n", "give exactly one of at_least_memory"),
            ("unit", 'unit = "MiB"\n', r"unit = 'MiB' goes with at_least_memory"),
            ("zero", None, r"at_least = 0; allowed: a number > 0")):
        directory = tmp_path / name / "make-grep"
        shutil.copytree(source, directory)
        meta = (directory / "meta.toml").read_text()
        if extra is None:
            meta = meta.replace("at_least = 0.8", "at_least = 0")
        else:
            meta = meta.replace("[regime]\n", "[regime]\n" + extra)
        (directory / "meta.toml").write_text(meta)
        with pytest.raises(StudyError, match=message):
            parse_workload(directory)


def test_regimes_are_declared_where_the_seeds_set_one():
    assert get_workload("desktop-launch").regime.policies == ("baseline",)
    assert get_workload("hot-stream").regime.required(128) == 1280.0  # MiB streamed
    assert get_workload("mmap-seq").regime.required(128) == 128.0
    assert get_workload("desktop-launch").regime.required(128) == 3 * 128 * 256  # pages
    assert get_workload("make-grep").regime.required(64) == 0.8  # a fraction, on any guest
    assert get_workload("make-grep").regime.policies == ()
    assert get_workload("thrash").regime.policies == (  # seed 001's "before", both ways
        "refault-scan-anon-off", "old-refault-distance-scan-anon-off")


def half_in_regime(tmp_path):
    """A two-repetition desktop study on 128 MiB whose r0 thrashes (swap-ins of four times
    memory) and whose r1 does not (100 pages): its study file and results root."""
    study_file = tmp_path / "regimes.toml"
    study_file.write_text(
        'description = "d"\nbaseline = "baseline"\nrepetitions = 2\nsystems = ["desktop-hdd-128"]\n'
        '[[experiment]]\nname = "desktop"\nworkload = "desktop-launch"\nseed = "000a"\n'
        'policies = ["baseline", "exec-protect-off"]\n')
    results = tmp_path / "results"
    memory_pages = 128 * 256
    for repetition, pswpin in ((0, 4 * memory_pages), (1, 100)):
        desktop_run(results / "regimes", "baseline", repetition, pswpin)
        desktop_run(results / "regimes", "exec-protect-off", repetition, pswpin)
    return study_file, results


def test_the_report_prints_each_runs_regime_and_marks_an_experiment_out_of_it(tmp_path):
    from analysis.report import build_report
    from reclaimstudy.campaigns.studies import load_study
    study_file, results = half_in_regime(tmp_path)
    markdown = build_report(load_study(str(study_file)), results)["markdown"].read_text()
    assert "**Regime** (seed 000a's effect needs a desktop that thrashes" in markdown
    assert "Out of regime: 1 of 2 runs fall short" in markdown
    assert re.search(r"\| baseline \| 1 \| 100 \| 0\.0\d+ \| \*\*no\*\* \|", markdown)
    # Each run is named in full: its repetition sits at the end of a long id.
    links = re.findall(r"^\| \[([^]]+)\]\(\.\./([^/]+)/run\.json\) \| baseline \|", markdown, re.M)
    assert len(links) == 2 and all(text == run_id for text, run_id in links)
    assert len({text for text, _ in links}) == 2
    seed_row = next(line for line in markdown.splitlines() if line.startswith("| 000a | desktop"))
    assert "| **out**: 1 of 2 short; the 1 pair in it: " in seed_row


def test_the_report_prints_a_plain_threshold_without_memory(tmp_path):
    from analysis.report import build_report
    from reclaimstudy.campaigns.studies import load_study
    study_file = tmp_path / "regimes.toml"
    study_file.write_text(
        'description = "d"\nbaseline = "baseline"\nrepetitions = 1\nsystems = ["desktop-hdd-64"]\n'
        '[[experiment]]\nname = "make-grep"\nworkload = "make-grep"\nseed = "003"\n'
        'policies = ["baseline", "use-once-unmapped-off"]\n')
    results = tmp_path / "results"
    make_grep_run(results / "regimes", "baseline", 0, make_s=5.0, grep_s=6.0)
    make_grep_run(results / "regimes", "use-once-unmapped-off", 0, make_s=8.0, grep_s=4.0)
    markdown = build_report(load_study(str(study_file)), results)["markdown"].read_text()
    assert "overlap at least 0.8." in markdown and "0.8x memory" not in markdown
    assert "Out of regime: 1 of 2 runs fall short" in markdown
    assert re.search(r"\| use-once-unmapped-off \| 0 \| 0\.5 \| 0\.8 \| \*\*no\*\* \|", markdown)


def test_a_regime_of_every_policy_names_none_beside_one_of_a_policy(tmp_path):
    """A report with the desktop's regime (baseline runs) and make-grep's (every run):
    make-grep's line names no policy (its empty policy once read as NaN)."""
    from analysis.report import build_report
    from reclaimstudy.campaigns.studies import load_study
    study_file = tmp_path / "regimes.toml"
    study_file.write_text(
        'description = "d"\nbaseline = "baseline"\nrepetitions = 1\nsystems = ["desktop-hdd-64"]\n'
        '[[experiment]]\nname = "make-grep"\nworkload = "make-grep"\nseed = "003"\n'
        'policies = ["baseline"]\n'
        '[[experiment]]\nname = "desktop"\nworkload = "desktop-launch"\nseed = "000a"\n'
        'policies = ["baseline"]\nsystems = ["desktop-hdd-128"]\n')
    results = tmp_path / "results"
    make_grep_run(results / "regimes", "baseline", 0, make_s=5.0, grep_s=6.0)
    desktop_run(results / "regimes", "baseline", 0, 4 * 128 * 256)
    markdown = build_report(load_study(str(study_file)), results)["markdown"].read_text()
    assert "overlap at least 0.8.\n" in markdown
    assert "at least 3.0x memory in the baseline runs." in markdown


def test_memory_is_the_guests_memtotal_when_the_run_recorded_it(tmp_path):
    study = tmp_path / "regimes"
    workload = get_workload("desktop-launch")
    record = make_record(study="regimes", workload="desktop-launch", policy="baseline",
                         system="desktop-hdd-128", experiment="desktop",
                         arguments=workload.arguments({"seed": 1}))
    pages = 3 * 100 * 256  # 3x a MemTotal of 100 MiB: short of 3x the profile's 128 MiB
    write_run(study, record, events=[
        {"event": "job_start", "memtotal_kib": 100 * 1024, "workload": "desktop-launch"},
        {"event": "record", "kind": "summary", "total_s": 1.0, "d_pgmajfault": 0,
         "d_pswpin": pages, "d_pswpout": 0}])
    row = checks(study).loc[record["run_id"]]
    assert row["in_regime"] and row["multiple"] == 3.0


def test_where_some_runs_fall_short_the_seed_table_judges_the_pairs_in_regime_alone(tmp_path):
    """Seed 001's control over four repetitions: the file thrashes without the change in
    r0-r2 (in regime; the late rounds 100x slower than with it) but settles in r3 (out;
    no difference). All four pairs: inconclusive; the three in regime: reproduced."""
    from analysis.report import build_report
    from reclaimstudy.campaigns.studies import load_study
    study_file = tmp_path / "regimes.toml"
    study_file.write_text(
        'description = "d"\nbaseline = "old-refault-distance"\nrepetitions = 4\n'
        'systems = ["desktop-ssd-96"]\n[[experiment]]\nname = "thrash-control"\n'
        'workload = "thrash"\nseed = "001"\n'
        'policies = ["old-refault-distance", "old-refault-distance-scan-anon-off"]\n')
    results = tmp_path / "results"
    for repetition in range(4):
        fast = [0.3] * 5 + [0.002 * (1 + repetition / 10)] * 5
        thrashing = repetition < 3
        slow = [0.3] * 5 + [0.2 * (1 + repetition / 7) if thrashing else fast[5]] * 5
        thrash_run(results / "regimes", "old-refault-distance", repetition, [2560] * 5 + [0] * 5,
                   experiment="thrash-control", seconds=fast)
        thrash_run(results / "regimes", "old-refault-distance-scan-anon-off", repetition,
                   [2560] * 5 + [2560 if thrashing else 0] * 5,
                   experiment="thrash-control", seconds=slow)
    markdown = build_report(load_study(str(study_file)), results)["markdown"].read_text()
    row = next(line for line in markdown.splitlines() if line.startswith("| 001 | thrash-control"))
    cells = [cell.strip() for cell in row.split("|")]
    assert cells[9].startswith("paired t-test: ")
    assert cells[10].startswith("**inconclusive (n=4, p=")  # r3's pair, 1.0, widens it
    in_regime = re.search(r"\*\*out\*\*: 1 of 4 short; the 3 pairs in it: ([0-9.]+) "
                          r"\[([0-9.]+), ([0-9.]+)\], p [0-9.e-]+, reproduced", cells[11])
    assert in_regime, cells[11]
    ratio, low, high = (float(v) for v in in_regime.groups())
    # r0-r2's ratios 0.002 * (1 + r/10) / (0.2 * (1 + r/7)), and their t-interval
    logs = np.log([0.002 * (1 + r / 10) / (0.2 * (1 + r / 7)) for r in range(3)])
    half = stats.t.ppf(0.975, 2) * logs.std(ddof=1) / math.sqrt(3)
    assert ratio == pytest.approx(math.exp(logs.mean()), rel=1e-3)
    assert (low, high) == (pytest.approx(math.exp(logs.mean() - half), rel=1e-3),
                           pytest.approx(math.exp(logs.mean() + half), rel=1e-3))
    assert ("**Out of regime: 1 of 4 runs fall short**; the seed table also judges the "
            "pairs of the repetitions in regime, alone.") in markdown
