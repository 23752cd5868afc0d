"""What a seed counted, beside the row that stands for it (configs/seeds.toml
`seed_metric`): seed 000b counted the whole system's pgmajfault between two vmmon
readings of /proc/vmstat, while its rows are judged by the idle program's own count."""

import json
from pathlib import Path

import pandas as pd
import pytest

from analysis import seeds
from analysis.compare import compare
from analysis.paired import paired
from analysis.records import read_events, workload_metrics
from analysis.report import seed_metric_text, write_report
from analysis.table import runs_table, vmstat_rows
from reclaimstudy.campaigns.studies import load_study
from reclaimstudy.errors import StudyError
from reclaimstudy.paths import CONFIGS
from reclaimstudy.results.record import PublishedRun

ROOT = Path(__file__).resolve().parent.parent
# Two real file-server runs at T = 0.1 s, r0, one build (tests/fixtures/runs/README.md).
FIXTURE = ROOT / "tests" / "fixtures" / "runs" / "hot-stream"
BASELINE = FIXTURE / "hot-stream-baseline-desktop-hdd-64-r0-gem5-ed861f0310"
CONTROL = FIXTURE / "hot-stream-exec-protect-all-off-desktop-hdd-64-r0-gem5-f7248d4f83"
PUBLISHED = ROOT / "results" / "published" / "seeds-gem5" / "report" / "table.parquet"
SEED_METRIC = "vmstat:stream:pgmajfault"


def fixture_runs() -> list[PublishedRun]:
    return [PublishedRun(d, json.loads((d / "run.json").read_text())) for d in (BASELINE, CONTROL)]


def test_seed_000bs_rows_name_the_whole_systems_pgmajfault_and_no_other_seed_needs_one():
    named = {(c.seed, c.metric, c.seed_metric) for c in seeds.load_claims() if c.seed_metric}
    assert named == {("000b", "interactive_majflt", SEED_METRIC)}
    assert all(c.seed_metric for c in seeds.load_claims() if c.seed == "000b")


@pytest.mark.parametrize("value, why", [
    ("pgmajfault", "write it as source:phase:metric"),
    ("gem5:stream:disk_reads", "write it as source:phase:metric"),
    ("vmstat:stream:pgmajfaults", "no vmstat metric 'pgmajfaults'"),
    ("vmstat:copy:pgmajfault", "phase 'copy'; allowed: begin, stream, restore"),
    ("vmstat:stream:pgpgin", "is in 'KiB', the claim's unit 'faults'"),
    ("workload:stream:stream_s", "is in 's', the claim's unit 'faults'"),
])
def test_a_seed_metric_its_source_phase_or_unit_does_not_allow_is_refused(tmp_path, value, why):
    path = tmp_path / "seeds.toml"
    text = (CONFIGS / "seeds.toml").read_text()
    path.write_text(text.replace(f'seed_metric = "{SEED_METRIC}"', f'seed_metric = "{value}"', 1))
    with pytest.raises(StudyError, match=why):
        seeds.load_claims(path)


def test_a_recorded_runs_stream_pgmajfault_is_what_the_seeds_vmmon_table_reads():
    """The vmstat source's stream pgmajfault is the seed table's (vmmon_pgmajfault at the
    stream's end less at its start), and differs from the program's own count."""
    counted = {}
    for run in (BASELINE, CONTROL):
        events = read_events(run)
        system = next(r["value"] for r in vmstat_rows(events)
                      if r["phase"] == "stream" and r["metric"] == "pgmajfault")
        own = workload_metrics("hot-stream", events)
        vmmon = {m.index: m.value for m in own if m.metric == "vmmon_pgmajfault"}
        program = next(m.value for m in own
                       if m.metric == "interactive_majflt" and m.phase == "stream")
        assert system == vmmon[1] - vmmon[0]
        counted[run.name.split("-desktop")[0]] = (system, program)
    # as recorded: the whole system's faults against the program's own
    assert counted == {"hot-stream-baseline": (27, 26), "hot-stream-exec-protect-all-off": (32, 41)}


def test_a_recorded_pair_shows_the_seed_metric_beside_its_row_and_in_the_report(tmp_path):
    kept = fixture_runs()
    table = runs_table(kept)
    rules = load_study("seeds-gem5").verdicts
    rows = seeds.reproduction(compare(table, "baseline"), table, None, rules)
    row = rows[rows["control"] & (rows["seed"] == "000b")].iloc[0]
    assert (row["metric"], row["ours_with"], row["ours_without"]) == ("interactive_majflt", 26, 41)
    beside = row["seed_metric"]
    assert (beside["metric"], beside["with"], beside["without"], beside["n_pairs"]) == (
        SEED_METRIC, 27, 32, 1)
    assert beside["ratio"] == pytest.approx(27 / 32)
    assert beside["verdict"] == "inconclusive (n=1)"
    text = seed_metric_text(row.to_dict())
    assert text.startswith(f"{SEED_METRIC} (faults): ours 27 / 32, paired 0.8438 [")
    out = tmp_path / "report"
    report = write_report(load_study("smoke"), table, kept, kept, out, [], source="fixture",
                          findings_path=tmp_path / "none.md")
    markdown = report["markdown"].read_text()
    section = markdown.split("**Verdicts**")[1].split("**The evidence**")[0]
    assert (f"- interactive_majflt [stream], control: exec-protect-all-off: ours 0.6341 [0.6341, 0.6341]"
            f", the seed's 0.06: **inconclusive** (no test)\n"
            f"  - beside it, what the seed counted, judged alone (not adjusted, outside the "
            f"family): {text}\n") in section
    full = markdown.split('<div id="seed-reproduction"></div>')[1]
    assert (f"- **000b** hot-stream, beside interactive_majflt [stream], control: "
            f"exec-protect-all-off: {text}\n") in full


@pytest.fixture(scope="module")
def published_file_servers() -> pd.DataFrame:
    table = pd.read_parquet(PUBLISHED)
    return table[table["experiment"].str.startswith("file-server-")]


def test_on_the_published_file_servers_the_seed_metric_is_the_vmmon_difference_and_moves_no_verdict(
        published_file_servers, monkeypatch):
    table = published_file_servers
    comparison = compare(table, "baseline")
    rules = load_study("seeds-gem5").verdicts
    rows = seeds.reproduction(comparison, table, None, rules)
    assert sorted(set(rows["experiment"])) == ["file-server-T0.01", "file-server-T0.1",
                                               "file-server-T0.25", "file-server-T0.6"]
    vmmon = table[table["metric"] == "vmmon_pgmajfault"].pivot_table(
        index=["experiment", "policy", "repetition"], columns="index", values="value")
    stream = (vmmon[1.0] - vmmon[0.0])
    for _, row in rows.iterrows():
        with_, without = ({int(r): v for (e, p, r), v in stream.items()
                           if e == row["experiment"] and p == policy}
                          for policy in row["policies"][:2])
        pair, beside = paired(with_, without), row["seed_metric"]
        assert (beside["n_pairs"], beside["ratio"]) == (10, pytest.approx(pair.ratio))
        assert beside["with"] == pytest.approx(sum(with_.values()) / 10)
    # without the seed's metric the rows, their family and their verdicts are the same
    bare = [c.model_copy(update={"seed_metric": ""}) for c in seeds.load_claims()]
    monkeypatch.setattr(seeds, "load_claims", lambda: bare)
    plain = seeds.reproduction(comparison, table, None, rules)
    assert plain["seed_metric"].isna().all()
    pd.testing.assert_frame_equal(rows.drop(columns="seed_metric"),
                                  plain.drop(columns="seed_metric"))
