"""What a seed counted, beside the row that stands for it (configs/seeds.toml
`seed_metric`): seed 000b counted the whole system's pgmajfault between two vmmon
readings of /proc/vmstat, while its rows are judged by the idle program's own count."""

from pathlib import Path

import pandas as pd
import pytest

from analysis import seeds
from analysis.compare import compare
from analysis.paired import paired
from reclaimstudy.campaigns.studies import load_study
from reclaimstudy.errors import StudyError
from reclaimstudy.paths import CONFIGS

ROOT = Path(__file__).resolve().parent.parent
PUBLISHED = ROOT / "results" / "published" / "seeds-gem5" / "report" / "table.parquet"
SEED_METRIC = "vmstat:stream:pgmajfault"


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
