"""A seed judged on several metrics together (analysis/signatures.py)."""

import pytest

from analysis.seeds import Signature, load_seeds
from analysis.signatures import signature_rows
from reclaimstudy.errors import StudyError

SIGNATURE = {"000a": Signature(what="faults and swap-ins fall, and time",
                               metrics=["pgmajfault", "pswpin", "total_s"])}


def _row(metric, verdict, ratio, policies=("seed000-context", "seed000-context-exec-protect-off"),
         seed="000a", phase=""):
    return {"seed": seed, "experiment": "desktop", "setup": "", "backend": "gem5",
            "system": "desktop-hdd-64", "policies": [*policies, "mglru"], "metric": metric,
            "phase": phase, "verdict": verdict, "paired_ratio": ratio,
            "interval_low": ratio * 0.9, "interval_high": ratio * 1.1, "seed_ratio": 0.5,
            "control": False, "anchor": "desktop-desktop-hdd-64-gem5"}


def test_every_metric_reproduced_is_the_seeds_signature_and_time_alone_is_not():
    # a sequential study's verdicts say the look they were decided at
    rows = [_row("pgmajfault", "reproduced (decided at 5 pairs)", 0.6),
            _row("pswpin", "reproduced", 0.5), _row("total_s", "reproduced", 0.7),
            # the published pair: the time moved, the faults and swap-ins did not
            _row("pgmajfault", "inconclusive (n=10, p=0.3)", 0.96, ("baseline", "exec-protect-off")),
            _row("pswpin", "inconclusive (n=10, p=0.6)", 0.99, ("baseline", "exec-protect-off")),
            _row("total_s", "reversed", 1.08, ("baseline", "exec-protect-off")),
            _row("total_s", "reproduced", 0.8, ("baseline", "exec-protect-off"), phase="launch-01"),
            _row("total_s", "reproduced", 0.8, seed="003")]
    out = {(r["with"], r["without"]): r for r in signature_rows(rows, SIGNATURE)}
    assert set(out) == {("seed000-context", "seed000-context-exec-protect-off"),
                        ("baseline", "exec-protect-off")}
    context = out["seed000-context", "seed000-context-exec-protect-off"]
    assert context["holds"] and context["reading"].startswith("the seed's signature")
    assert [c["metric"] for c in context["cells"]] == ["pgmajfault", "pswpin", "total_s"]
    assert [c["ratio"] for c in context["cells"]] == [0.6, 0.5, 0.7]
    published = out["baseline", "exec-protect-off"]
    assert not published["holds"]
    assert published["reading"] == ("not the seed's signature: no metric moved as the seed's "
                                    "did (pgmajfault inconclusive, pswpin inconclusive, "
                                    "total_s reversed)")
    # a phase's row of the same metric is not the whole run's
    assert published["cells"][2]["ratio"] == 1.08


def test_a_pair_where_only_time_moves_says_so_and_a_missing_row_is_not_judged():
    time_only = [_row("pgmajfault", "inconclusive (n=5, p=0.4)", 0.97),
                 _row("pswpin", "inconclusive (n=5, p=0.8)", 1.01),
                 _row("total_s", "reproduced", 0.93)]
    [row] = signature_rows(time_only, SIGNATURE)
    assert row["reading"] == ("not the seed's signature: only total_s moved as the seed's did "
                              "(pgmajfault inconclusive, pswpin inconclusive)")
    control = [_row("total_s", "reproduced", 0.9, ("baseline", "exec-protect-all-off"))]
    [row] = signature_rows(control, SIGNATURE)
    assert not row["holds"] and not row["judged"]
    assert row["reading"] == ("not judged together: seeds.toml claims no row of pgmajfault, "
                              "pswpin for this pair")


def test_a_signature_names_claimed_metrics_of_a_claimed_seed(tmp_path):
    from reclaimstudy.paths import CONFIGS
    text = (CONFIGS / "seeds.toml").read_text()
    assert load_seeds().signature["000a"].metrics == ["pgmajfault", "pswpin", "total_s"]
    bad_metric = tmp_path / "metric.toml"
    bad_metric.write_text(text.replace('metrics = ["pgmajfault", "pswpin", "total_s"]',
                                       'metrics = ["pgmajfault", "launch_s"]'))
    with pytest.raises(StudyError, match="'launch_s' is not a metric of seed 000a's claims; "
                                         "allowed: pgmajfault, pswpin, total_s"):
        load_seeds(bad_metric)
    bad_seed = tmp_path / "seed.toml"
    bad_seed.write_text(text.replace('[signature."000a"]', '[signature."999"]'))
    with pytest.raises(StudyError, match="\\[signature\\] names seed '999', which has no"):
        load_seeds(bad_seed)


def test_a_claim_given_twice_is_refused(tmp_path):
    from reclaimstudy.paths import CONFIGS
    text = (CONFIGS / "seeds.toml").read_text()
    first = text.index("[[claim]]")
    claim = text[first:text.index("[[claim]]", first + 1)]
    twice = tmp_path / "twice.toml"
    twice.write_text(text.replace(claim, claim + claim, 1))
    with pytest.raises(StudyError, match="seed 000a's claim on total_s \\[whole run\\], "
                                         "baseline against exec-protect-off, is given twice"):
        load_seeds(twice)
