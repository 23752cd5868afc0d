"""Seed 000b's idle-time sweep: faults against T across hot-stream experiments, with the
scan times I and A from the classic-LRU runs, drawn in the report."""

import pandas as pd

from analysis.idle_sweep import idle_sweeps
from analysis.table import current_runs, runs_table, study_runs
from reclaimstudy.config.workloads import get_workload
from tests.runfactory import make_record, write_run


def stream_run(study_dir, policy, repetition, period_us, faults, inactive=None, active=None):
    """A hot-stream run: its interactive program's faults in the stream, and the vmstat
    at the stream's start and end that give I and A (I = inactive length / pages
    scanned a second, A = active length / pages deactivated a second; a 1-s stream)."""
    workload = get_workload("hot-stream")
    record = make_record(study="idle", workload="hot-stream", policy=policy,
                         system="desktop-hdd-64", repetition=repetition,
                         experiment=f"file-server-T{period_us / 1e6:g}",
                         arguments=workload.arguments({"period_us": period_us}))
    start = {"nr_inactive_file": 1000, "nr_active_file": 1000, "pgscan_file": 0,
             "pgdeactivate": 0}
    end = dict(start, pgscan_file=1000 / inactive if inactive else 0,
               pgdeactivate=1000 / active if active else 0)
    write_run(study_dir, record, events=[
        {"event": "phase", "name": "begin", "t": 0.0, "vmstat": start},
        {"event": "phase", "name": "stream", "t": 1.0, "vmstat": start},
        {"event": "record", "kind": "interactive", "majflt": faults, "wakeups": 3, "polls": 3},
        {"event": "phase", "name": "restore", "t": 2.0, "vmstat": end}])
    return record["run_id"]


def test_faults_against_idle_time_with_the_classic_lrus_scan_times(tmp_path):
    study = tmp_path / "idle"
    stream_run(study, "baseline", 0, 10_000, 30, inactive=0.03, active=0.3)
    stream_run(study, "baseline", 0, 600_000, 18, inactive=0.05, active=0.5)
    stream_run(study, "baseline", 1, 600_000, 20, inactive=0.04, active=0.4)
    stream_run(study, "mglru", 0, 10_000, 0, inactive=0.2)  # no active list scanned
    kept, _, _ = current_runs(study_runs(study, "idle"))
    sweeps = idle_sweeps(runs_table(kept))
    assert list(sweeps) == [("qemu", "desktop-hdd-64")]
    sweep = sweeps[("qemu", "desktop-hdd-64")]
    assert sorted(sweep["T"]) == [0.01, 0.01, 0.6, 0.6]
    baseline_at = sweep[sweep["policy"] == "baseline"].groupby("T")["interactive_majflt"].mean()
    assert baseline_at.to_dict() == {0.01: 30.0, 0.6: 19.0}
    mglru = sweep[sweep["policy"] == "mglru"].iloc[0]
    assert mglru["inactive_scan_s"] == 0.2 and pd.isna(mglru["active_scan_s"])
    classic = sweep.dropna(subset=["inactive_scan_s", "active_scan_s"])
    assert abs(classic["inactive_scan_s"].mean() - 0.04) < 1e-9  # MGLRU's 0.2 left out


def test_one_idle_time_is_no_sweep(tmp_path):
    study = tmp_path / "idle"
    stream_run(study, "baseline", 0, 10_000, 30, inactive=0.03, active=0.3)
    stream_run(study, "exec-protect-off", 0, 10_000, 50, inactive=0.03, active=0.3)
    kept, _, _ = current_runs(study_runs(study, "idle"))
    assert idle_sweeps(runs_table(kept)) == {}


def test_the_report_draws_the_sweep_with_its_runs(tmp_path):
    from analysis.report import build_report
    from reclaimstudy.campaigns.studies import load_study
    study_file = tmp_path / "idle.toml"
    study_file.write_text(
        'description = "d"\nbaseline = "baseline"\nrepetitions = 1\nsystems = ["desktop-hdd-64"]\n'
        + "".join(f'[[experiment]]\nname = "file-server-T{t:g}"\nworkload = "hot-stream"\n'
                  f'seed = "000b"\npolicies = ["baseline"]\nparams = {{ period_us = {us} }}\n'
                  for t, us in ((0.01, 10_000), (0.6, 600_000))))
    results = tmp_path / "results"
    stream_run(results / "idle", "baseline", 0, 10_000, 30, inactive=0.03, active=0.3)
    stream_run(results / "idle", "baseline", 0, 600_000, 18, inactive=0.05, active=0.5)
    report = build_report(load_study(str(study_file)), results)
    markdown = report["markdown"].read_text()
    assert ("from 2 runs of\nfile-server-T0.01, file-server-T0.6." in markdown)
    figure = report["markdown"].parent / "plots" / "idle-sweep-desktop-hdd-64-qemu.png"
    assert figure.stat().st_size > 10_000
    assert "![idle-time sweep](plots/idle-sweep-desktop-hdd-64-qemu.png)" in markdown
