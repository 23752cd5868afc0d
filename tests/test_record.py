"""One record of a run: its identity names every input, and the table never pools runs
that differ in anything but the repetition (one generation of inputs per comparison)."""

import json

import pytest

from analysis.compare import compare
from analysis.table import build_table, current_runs, study_runs
from reclaimstudy.errors import StudyError
from reclaimstudy.results import record
from tests.runfactory import GEM5_ARTEFACTS, changed, make_record, write_run

# Each input of a run's identity, and a new value for it. The artefacts and the record
# schema make a new generation of the same points (the older one is set aside); the
# others make other points (both are kept, never as repetitions of each other).
NEW_GENERATION = {
    "kernel": (("artefacts", "kernel"), "k2"),
    "image": (("artefacts", "image"), "i2"),
    "gem5 binary": (("artefacts", "gem5"), "g2"),
    "boot checkpoint": (("artefacts", "checkpoint"), "c2"),
    "record schema": (("schema",), record.RUN_SCHEMA + 1),
}
OTHER_POINT = {
    "a system parameter": (("system", "disk_delay_us"), 999.0),
    "a policy knob": (("policy", "knobs", "use_once"), 0),
    "a workload argument": (("workload", "arguments"), {"read_mib": 9}),
}


def two_policies_two_repetitions(started_at="2026-11-23T10:00:00+0000") -> list[dict]:
    return [make_record(backend="gem5", policy=policy, repetition=rep, started_at=started_at)
            for policy in ("baseline", "mglru") for rep in (0, 1)]


def read_seconds_n(study_dir) -> dict:
    """n per (setup, policy) of the compared read time."""
    result = compare(build_table(study_dir, "smoke"), "baseline")
    rows = result[result["metric"] == "read_s"]
    return {(r["setup"], r["policy"]): r["n"] for _, r in rows.iterrows()}


@pytest.mark.parametrize("what", NEW_GENERATION)
def test_a_new_generation_of_inputs_supersedes_the_old_one_never_pools_with_it(tmp_path, what):
    path, value = NEW_GENERATION[what]
    old = two_policies_two_repetitions()
    for run in old:
        write_run(tmp_path, run)
    new = []
    for run in old:
        run = changed(run, path, value)
        run["started_at"] = "2026-11-24T10:00:00+0000"
        if path == ("schema",):
            continue  # a newer schema than this code reads is refused (below)
        new.append(run)
        write_run(tmp_path, run)
    if path == ("schema",):
        write_run(tmp_path, changed(old[0], path, value))
        with pytest.raises(StudyError, match=f"schema {value}; this version reads"):
            build_table(tmp_path, "smoke")
        return
    assert not {r["run_id"] for r in old} & {r["run_id"] for r in new}, "same run ids"
    table = build_table(tmp_path, "smoke")
    assert set(table["run_id"]) == {r["run_id"] for r in new}
    assert table.attrs["superseded"] == 4
    assert sorted(read_seconds_n(tmp_path).values()) == [2, 2]


@pytest.mark.parametrize("what, shared", [("gem5 binary", True), ("kernel", True),
                                          ("image", False), ("boot checkpoint", False)])
def test_a_new_simulator_or_kernel_on_one_system_supersedes_the_old_on_every_system(
        tmp_path, what, shared):
    """A fixed gem5 fault must not linger in the systems not yet run again; an image or
    checkpoint is made per system, so a new one on one system leaves the others."""
    path, value = NEW_GENERATION[what]
    other = [make_record(backend="gem5", policy=p, system="desktop-hdd", repetition=0)
             for p in ("baseline", "mglru")]
    for run in two_policies_two_repetitions() + other:
        write_run(tmp_path, run)
    newer = [changed(run, path, value) | {"started_at": "2026-11-24T10:00:00+0000"}
             for run in two_policies_two_repetitions()]
    for run in newer:
        write_run(tmp_path, run)
    table = build_table(tmp_path, "smoke")
    kept = {r["run_id"] for r in newer} | (set() if shared else {r["run_id"] for r in other})
    assert set(table["run_id"]) == kept
    assert table.attrs["superseded"] == 4 + (2 if shared else 0)


EXPERIMENT_MIB = {"kept-one": 1, "not-kept": 2, "new-one": 3}


@pytest.mark.parametrize("what", ["kernel", "gem5 binary"])
def test_an_experiment_the_study_keeps_on_an_older_instrument_is_its_own_generation(tmp_path, what):
    """A new kernel or simulator run for one experiment supersedes the older runs of every
    other experiment, but not those of an experiment the study file keeps on an older
    instrument (its [older_instrument] says why); that experiment's own newer runs still
    supersede its older."""
    path, value = NEW_GENERATION[what]
    def runs(experiment, started_at="2026-11-23T10:00:00+0000"):
        # experiments of one workload differ in its arguments (the run id holds no name)
        return [make_record(backend="gem5", policy=p, repetition=r, experiment=experiment,
                            arguments={"read_mib": EXPERIMENT_MIB[experiment]}, started_at=started_at)
                for p in ("baseline", "mglru") for r in (0, 1)]
    kept_old, superseded_old = runs("kept-one"), runs("not-kept")
    newer = [changed(run, path, value) for run in runs("new-one", "2026-11-24T10:00:00+0000")]
    for run in kept_old + superseded_old + newer:
        write_run(tmp_path, run)
    found = study_runs(tmp_path, "smoke")
    kept, superseded, _ = current_runs(found, older_instrument=["kept-one"])
    ids = lambda rs: {r["run_id"] for r in rs}  # noqa: E731
    assert {run.record["run_id"] for run in kept} == ids(kept_old) | ids(newer)
    assert superseded == 4
    kept, superseded, _ = current_runs(found)  # none kept: the newest everywhere
    assert {run.record["run_id"] for run in kept} == ids(newer) and superseded == 8
    # the kept experiment run again on the newer instrument: its older runs go
    again = [changed(run, path, value) | {"started_at": "2026-11-25T10:00:00+0000"}
             for run in runs("kept-one")]
    for run in again:
        write_run(tmp_path, run, name=run["run_id"] + "-again")
    kept, superseded, _ = current_runs(study_runs(tmp_path, "smoke"), older_instrument=["kept-one"])
    assert {run.record["run_id"] for run in kept} == ids(again) | ids(newer)


def test_runs_of_an_older_record_schema_are_set_aside(tmp_path):
    runs = two_policies_two_repetitions()
    for run in runs:
        write_run(tmp_path, run)
    older = changed(runs[0], ("schema",), record.RUN_SCHEMA - 1)
    older["started_at"] = "2099-01-01T00:00:00+0000"  # even when newer
    write_run(tmp_path, older)
    table = build_table(tmp_path, "smoke")
    assert table.attrs["superseded"] == 1 and older["run_id"] not in set(table["run_id"])


@pytest.mark.parametrize("what", OTHER_POINT)
def test_runs_of_other_points_are_kept_apart(tmp_path, what):
    path, value = OTHER_POINT[what]
    runs = two_policies_two_repetitions()
    for run in runs:
        write_run(tmp_path, run)
        write_run(tmp_path, changed(run, path, value))
    if what == "a policy knob":
        # The same names, other settings: refused rather than pooled.
        with pytest.raises(StudyError, match="has runs of 2 different settings under one name"):
            read_seconds_n(tmp_path)
        return
    n = read_seconds_n(tmp_path)
    assert len(n) == 4 and all(count == 2 for count in n.values()), n


def test_the_run_id_and_the_keys_come_from_the_identity_alone():
    base = make_record(backend="gem5")
    assert record.point_key(base["identity"]) == record.point_key(
        changed(base, ("artefacts", "kernel"), "k9")["identity"])
    assert record.setup_key(base["identity"]) == record.setup_key(
        changed(base, ("repetition",), 5)["identity"])
    assert record.setup_key(base["identity"]) != record.setup_key(
        changed(base, ("artefacts", "image"), "i9")["identity"])
    assert record.artefacts_key(base["identity"]) == record.artefacts_key(
        changed(base, ("policy", "name"), "other")["identity"])


def test_a_repetitions_own_seed_argument_does_not_split_its_cell(tmp_path):
    for policy in ("baseline", "mglru"):
        for rep in (0, 1):
            write_run(tmp_path, make_record(policy=policy, repetition=rep,
                                            arguments={"read_mib": 4, "seed": 1 + rep}))
    assert sorted(read_seconds_n(tmp_path).values()) == [2, 2]


def test_a_bad_run_json_is_an_error_naming_the_file(tmp_path):
    good = write_run(tmp_path, make_record())
    assert record.read_run(good).ok
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "run.json").write_text("{not json")
    with pytest.raises(StudyError, match=r"broken/run.json: not a readable run.json"):
        record.published_runs(tmp_path)
    (broken / "run.json").write_text(json.dumps({**make_record(), "status": None}))
    with pytest.raises(StudyError, match=r"broken/run.json: not a valid run.json \(status"):
        record.published_runs(tmp_path)
    (broken / "run.json").unlink()  # never published: not a run
    assert [r.directory for r in record.published_runs(tmp_path)] == [good]


def test_every_run_json_is_put_together_by_the_one_writer():
    """run.json's fields are assembled in record.run_record alone: no other module of the
    tool, analysis or the tests builds a dict with its name fields."""
    import ast
    from pathlib import Path
    repo = Path(__file__).resolve().parent.parent
    writer = repo / "reclaimstudy" / "results" / "record.py"
    builders = []
    for folder in ("reclaimstudy", "analysis", "tests"):
        for path in sorted((repo / folder).rglob("*.py")):
            if path == writer:
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                keys = {k.value for k in getattr(node, "keys", []) or []
                        if isinstance(k, ast.Constant)} if isinstance(node, ast.Dict) else set()
                if {"run_id", "identity", "label"} <= keys or {"policy_name", "identity"} <= keys:
                    builders.append(f"{path.relative_to(repo)}:{node.lineno}")
    assert not builders, f"run.json built outside record.run_record: {builders}"


def test_the_writer_derives_the_names_and_id_from_the_identity_and_checks_the_record():
    made = make_record(backend="gem5", policy="mglru", repetition=3)
    identity = made["identity"]
    assert made["run_id"] == record.identity_run_id(identity) and made["run_id"].startswith(
        "smoke-mglru-ci-tiny-r3-gem5-")
    assert (made["label"], made["policy_name"], made["schema"]) == (
        "smoke/mglru/ci-tiny/r3", "mglru", record.RUN_SCHEMA)
    with pytest.raises(StudyError, match=r"not a valid run.json \(status"):
        record.run_record(identity, study="s", experiment="", artefacts={}, status=None,
                          reason=None, started_at="", wall_seconds=0.0, host={})


def test_a_slurm_task_slurm_ended_is_published_by_the_one_writer(tmp_path):
    """cluster.record_ended: the same record as a run's, with Slurm's reason and job."""
    from reclaimstudy.campaigns import cluster, runs, slurm
    from reclaimstudy.config.policies import get_policy
    from reclaimstudy.config.systems import get_system
    from reclaimstudy.config.workloads import get_workload
    workload = get_workload("smoke")
    spec = runs.RunSpec("smoke", get_system("ci-tiny"), get_policy("baseline"), workload,
                        workload.arguments(), 0, "qemu", experiment="smoke")
    artefacts = {"kernel": "k1", "image": "i1"}
    planned = cluster.PlannedRun(spec, runs.run_id(spec, artefacts), artefacts)
    (tmp_path / cluster.SLURM_DIR).mkdir()
    state = slurm.JobState("12_0", "TIMEOUT", "0:15", start="2026-12-01T10:00:00",
                           end="2026-12-01T11:00:00")
    cluster.record_ended(tmp_path, planned, "12_0", state, {"node": "n1"}, "Slurm ended it")
    run = record.read_run(tmp_path / planned.run_id)
    assert run.record["run_id"] == planned.run_id and run.record["status"] == "failed"
    assert run.record["label"] == spec.label() and run.record["wall_seconds"] == 3600
    assert run.record["slurm"]["state"] == "TIMEOUT" and run.record["host"]["node"] == "n1"


def test_a_study_keeps_only_its_own_experiments_on_an_older_instrument_each_with_why(tmp_path):
    from reclaimstudy.campaigns.studies import parse_study
    table = {"description": "d", "baseline": "baseline",
             "experiment": [{"name": e, "workload": "lazyfree", "policies": ["baseline"],
                             "systems": ["desktop-hdd-96"], "repetitions": n}
                            for n, e in ((1, "old"), (2, "new"))],
             "older_instrument": {"olde": "the newer kernel only adds drivers this profile never loads"}}
    with pytest.raises(StudyError, match="\\[older_instrument\\] names 'olde', not an experiment of "
                                         "this study; allowed: old, new"):
        parse_study("x", table, tmp_path / "x.toml")
    table["older_instrument"] = {"old": " "}
    with pytest.raises(StudyError, match="older_instrument"):
        parse_study("x", table, tmp_path / "x.toml")
    table["older_instrument"] = {"old": "the newer kernel only adds drivers this profile never loads"}
    assert parse_study("x", table, tmp_path / "x.toml").older_instrument == (
        ("old", "the newer kernel only adds drivers this profile never loads"),)


def test_experiments_sharing_a_reason_for_an_older_instrument_are_written_as_one_group(tmp_path):
    """[[older_instrument]] groups: each experiment gets its groups' reasons in the file's
    order; a group naming no experiment, or an unknown one, is refused."""
    from reclaimstudy.campaigns.studies import parse_study
    table = {"description": "d", "baseline": "baseline",
             "experiment": [{"name": e, "workload": "lazyfree", "policies": ["baseline"],
                             "systems": ["desktop-hdd-96"]} for e in ("a", "b", "c")],
             "older_instrument": [{"experiments": ["a", "b"], "why": "the kernel adds drivers"},
                                  {"experiments": ["b"], "why": "its drive was seen rotating"}]}
    assert parse_study("x", table, tmp_path / "x.toml").older_instrument == (
        ("a", "the kernel adds drivers"),
        ("b", "the kernel adds drivers; its drive was seen rotating"))
    table["older_instrument"][1]["experiments"] = ["d"]
    with pytest.raises(StudyError, match="names 'd', not an experiment of this study; allowed: a, b, c"):
        parse_study("x", table, tmp_path / "x.toml")
    table["older_instrument"][1]["experiments"] = []
    with pytest.raises(StudyError, match=r"\[\[older_instrument\]\] #2: experiments = \[\]"):
        parse_study("x", table, tmp_path / "x.toml")
    del table["older_instrument"][1]["experiments"]
    with pytest.raises(StudyError, match=r"#2: missing key\(s\) experiments$"):
        parse_study("x", table, tmp_path / "x.toml")


def test_runs_of_one_gem5_build_are_one_generation_whatever_their_systems_add():
    """A four-core run's identity keys gem5 with 0009's version, a DiskSim drive's with
    DiskSim's: runs of one build on one-core and other systems stand together, and a
    newer build on any system sets aside the older build's runs on all of them."""
    import tempfile
    from pathlib import Path

    def run(system, identity_key, build, day):
        record = make_record(backend="gem5", system=system, policy="baseline",
                             artefacts={**GEM5_ARTEFACTS, "gem5": identity_key},
                             started_at=f"2026-11-{day}T10:00:00+0000")
        record["artefacts"]["gem5"]["simulator"] = build
        return record

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder)
        one_core = run("desktop-hdd-96", "b1", "b1", 23)
        four_core = run("desktop-hdd-96-4core", "b1-smp", "b1", 24)
        for record in (one_core, four_core):
            write_run(path, record)
        kept, superseded, _ = current_runs(study_runs(path, "smoke"))
        assert {r.record["run_id"] for r in kept} == {one_core["run_id"], four_core["run_id"]}
        newer = run("desktop-hdd-96", "b2", "b2", 25)
        write_run(path, newer)
        kept, superseded, _ = current_runs(study_runs(path, "smoke"))
        assert [r.record["run_id"] for r in kept] == [newer["run_id"]] and superseded == 2



def test_a_record_slurm_ended_holds_plain_keys_and_still_finds_its_generation(tmp_path):
    """cluster.record_ended writes the identity's keys as the record's artefacts (no
    simulator key): the table falls back to the identity's gem5 key."""
    ended = make_record(backend="gem5", status="failed")
    ended["artefacts"] = dict(GEM5_ARTEFACTS)
    write_run(tmp_path, ended)
    kept, superseded, _ = current_runs(study_runs(tmp_path, "smoke"))
    assert [r.record["run_id"] for r in kept] == [ended["run_id"]] and superseded == 0
