"""A sweep names its runs from the inputs alone and builds a system's kernel, image and
boot checkpoint only when that system's first pending run starts: once per system,
never for a system whose runs are all done, and a failed preparation fails that
system's runs without preparing again for each."""

import json
import threading

import pytest

from reclaimstudy.campaigns import cluster, runs, sweep
from reclaimstudy.campaigns.studies import load_study
from reclaimstudy.errors import StudyError
from reclaimstudy.results import record

# Two systems: ebizzy runs on desktop-hdd-96, thrash on desktop-ssd-96.
SELECTION = ["ebizzy/*/*/r0", "thrash/*/*/r0"]


class Prepared:
    def __init__(self, identity, record=None):
        self.identity, self.record, self.parts = identity, record or {}, {}


class Backend:
    console_file = "console.log"

    def __init__(self, broken=(), drifting=(), vmlinux="same", gem5="same"):
        self.broken, self.drifting, self.vmlinux = set(broken), set(drifting), vmlinux
        self.gem5 = gem5
        self.prepares: dict[str, int] = {}
        self.lock = threading.Lock()

    def identity(self, spec):
        return {"kernel": "k", "image": spec.system.name}

    def prepare(self, spec):
        name = spec.system.name
        with self.lock:
            self.prepares[name] = self.prepares.get(name, 0) + 1
        if name in self.broken:
            raise StudyError(f"boot of {name} failed")
        identity = self.identity(spec)
        return Prepared({**identity, "image": "rebuilt"} if name in self.drifting else identity,
                        {"kernel": {"vmlinux_sha256": self.vmlinux},
                         "image": {"root_sha256": "root-" + name},
                         "gem5": {"sha256": self.gem5}})


@pytest.fixture
def study():
    return load_study("seeds-gem5").select(SELECTION)


def executed(monkeypatch, backend, done_ids=(), made_on=None, unmade_ids=(), gem5_made="same"):
    """Patch the sweep to use `backend`, count runs per system, and report `done_ids`
    as already published (made on kernel `made_on`: their records are then current), and
    `unmade_ids` as failed before they ran."""
    ran = []

    def execute(spec, backend_, results, prepared, timeout_s):
        assert prepared.identity == backend.identity(spec)  # the system's own artefacts
        ran.append(spec.system.name)
        return {"status": "ok", "reason": ""}

    class Done:
        ok, current_schema = True, False  # an old schema: not handed to the sweep log

    monkeypatch.setattr(sweep, "get_backend", lambda name: backend)
    monkeypatch.setattr(runs, "execute", execute)
    specs = {runs.run_id(spec, backend.identity(spec)): spec
             for _, spec in load_study("seeds-gem5").select(SELECTION).runs("qemu")}

    class Made(Done):
        current_schema = True

        def __init__(self, run_id):
            name = specs[run_id].system.name
            self.record = {"run_id": run_id, "status": "ok", "wall_seconds": 1.0,
                           "started_at": "2026-11-01T00:00:00+0000", "host": {"node": "other"},
                           "identity": {"artefacts": backend.identity(specs[run_id])},
                           "artefacts": {"kernel": {"vmlinux_sha256": made_on},
                                         "image": {"root_sha256": "root-" + name},
                                         "gem5": {"sha256": gem5_made}}}

    class Unmade(Made):
        """Failed before it ran (Slurm ended its task): its record names artefact ids only."""

        def __init__(self, run_id):
            super().__init__(run_id)
            self.ok, self.record["status"] = False, "failed"
            self.record["artefacts"] = self.record["identity"]["artefacts"]

    monkeypatch.setattr(record, "read_run", lambda path: (
        (Made(path.name) if made_on else Done()) if path.name in done_ids
        else Unmade(path.name) if path.name in unmade_ids else None))
    return ran


def test_each_system_is_prepared_once_when_its_first_run_starts(tmp_path, monkeypatch, study):
    backend = Backend()
    ran = executed(monkeypatch, backend)
    outcome = sweep.run_sweep(study, "qemu", tmp_path, jobs=2)
    assert outcome.ok and outcome.done == len(ran) == 6
    assert backend.prepares == {"desktop-hdd-96": 1, "desktop-ssd-96": 1}


def test_a_system_whose_runs_are_all_done_is_not_prepared(tmp_path, monkeypatch, study):
    backend = Backend()
    done = {runs.run_id(spec, backend.identity(spec)) for _, spec in study.runs("qemu")
            if spec.system.name == "desktop-hdd-96"}
    ran = executed(monkeypatch, backend, done_ids=done)
    outcome = sweep.run_sweep(study, "qemu", tmp_path, jobs=2)
    assert (outcome.skipped, outcome.done) == (3, 3) and set(ran) == {"desktop-ssd-96"}
    assert backend.prepares == {"desktop-ssd-96": 1}


def test_a_failed_preparation_fails_its_systems_runs_once_and_spares_the_others(
        tmp_path, monkeypatch, study):
    backend = Backend(broken={"desktop-ssd-96"})
    ran = executed(monkeypatch, backend)
    outcome = sweep.run_sweep(study, "qemu", tmp_path, jobs=2)
    assert ran == ["desktop-hdd-96"] * 3 and len(outcome.failed) == 3
    assert all(reason == "boot of desktop-ssd-96 failed" for _, reason in outcome.failed)
    assert backend.prepares["desktop-ssd-96"] == 1


def test_artefacts_that_no_longer_match_the_run_ids_fail_the_runs(tmp_path, monkeypatch, study):
    backend = Backend(drifting={"desktop-hdd-96"})
    ran = executed(monkeypatch, backend)
    outcome = sweep.run_sweep(study, "qemu", tmp_path, jobs=1)
    assert set(ran) == {"desktop-ssd-96"} and len(outcome.failed) == 3
    assert all("changed while the sweep ran" in reason and "rebuilt" in reason
               for _, reason in outcome.failed)


def test_a_kernel_whose_bytes_differ_from_the_finished_runs_one_is_refused(
        tmp_path, monkeypatch, study):
    """Same inputs, same run ids, other bytes (a build that is not reproducible): new
    runs would not pair with the finished ones, so they are not made."""
    backend = Backend(vmlinux="built-here")
    done = {runs.run_id(spec, backend.identity(spec)) for _, spec in study.runs("qemu")
            if spec.policy.name == "baseline"}
    ran = executed(monkeypatch, backend, done_ids=done, made_on="built-there")
    outcome = sweep.run_sweep(study, "qemu", tmp_path, jobs=1)
    assert ran == [] and len(outcome.failed) == 4 and outcome.skipped == 2
    assert all("vmlinux_sha256 built-here" in reason and "built-there" in reason
               and "1 finished run(s)" in reason for _, reason in outcome.failed)


def test_the_same_bytes_go_on_and_a_run_that_never_ran_names_no_bytes(
        tmp_path, monkeypatch, study):
    backend = Backend(vmlinux="built-there")
    ids = {spec.policy.name: runs.run_id(spec, backend.identity(spec))
           for _, spec in study.runs("qemu") if spec.system.name == "desktop-ssd-96"}
    done = {runs.run_id(spec, backend.identity(spec)) for _, spec in study.runs("qemu")
            if spec.policy.name == "baseline"}
    ran = executed(monkeypatch, backend, done_ids=done, made_on="built-there",
                   unmade_ids={ids["mglru"]})
    outcome = sweep.run_sweep(study, "qemu", tmp_path, jobs=1)
    assert outcome.ok and len(ran) == 4 and outcome.skipped == 2


def test_another_gem5_build_goes_on_but_is_told_to_check_it_simulates_alike(
        tmp_path, monkeypatch, study, capsys):
    """gem5 embeds its build time, so a rebuild (a new machine) is never the same bytes:
    not refused, but the sweep says how to check it before its runs pair with old ones."""
    backend = Backend(vmlinux="built-there", gem5="gem5-built-here")
    done = {runs.run_id(spec, backend.identity(spec)) for _, spec in study.runs("qemu")
            if spec.policy.name == "baseline"}
    ran = executed(monkeypatch, backend, done_ids=done, made_on="built-there",
                   gem5_made="gem5-built-there")
    outcome = sweep.run_sweep(study, "qemu", tmp_path, jobs=1)
    assert outcome.ok and len(ran) == 4
    said = " ".join(capsys.readouterr().err.split())
    assert said.count("is another build than the one") == 2  # once per system
    assert "gem5 (sha256 gem5-built-here) is another build" in said
    assert "(gem5-built-there)" in said and "./study repeat STUDY --only RUN" in said
    # the same build says nothing
    capsys.readouterr()
    backend = Backend(vmlinux="built-there", gem5="gem5-built-there")
    executed(monkeypatch, backend, done_ids=done, made_on="built-there",
             gem5_made="gem5-built-there")
    sweep.run_sweep(study, "qemu", tmp_path / "again", jobs=1)
    assert "another build" not in capsys.readouterr().err
    # a build `study repeat` checked says so instead of asking for the check
    backend = Backend(vmlinux="built-there", gem5="gem5-built-here")
    executed(monkeypatch, backend, done_ids=done, made_on="built-there",
             gem5_made="gem5-built-there")
    sweep.record_repeated_build(runs.study_dir(study.name, tmp_path / "checked"),
                                "gem5-built-here", "ebizzy-baseline-r1", 176)
    sweep.run_sweep(study, "qemu", tmp_path / "checked", jobs=1)
    said = " ".join(capsys.readouterr().err.split())
    assert said.count("made published run ebizzy-baseline-r1 again with all 176 values the "
                      "same") == 2 and "./study repeat STUDY" not in said


def slurm_ledger(tmp_path, study, backend) -> str:
    """A submission of the study's unfinished thrash mglru r0, as `sweep --on slurm` writes it."""
    pending = next(spec for _, spec in study.runs("qemu")
                   if spec.point() == "thrash/mglru/desktop-ssd-96/r0")
    run_id = runs.run_id(pending, backend.identity(pending))
    path = tmp_path / "ledger.json"
    path.write_text(json.dumps({"study_file": str(study.path.resolve()), "backend": "qemu",
                                "results": str(tmp_path), "timeout_s": None,
                                "runs": [{"run_id": run_id, "label": pending.point()}]}))
    (cluster.slurm_dir(runs.study_dir(study.name, tmp_path)) / "tasks").mkdir(parents=True)
    return str(path)


@pytest.mark.parametrize("made_on, refused", [("built-there", True), ("built-here", False)])
def test_a_slurm_node_refuses_a_kernel_other_than_the_finished_runs_one(
        tmp_path, monkeypatch, study, made_on, refused):
    """A cluster node may build its own kernel and image: its prepare job and each task
    check their bytes against the finished runs of the same ids, as the local sweep does."""
    backend = Backend(vmlinux="built-here")
    done = {runs.run_id(spec, backend.identity(spec)) for _, spec in study.runs("qemu")
            if spec.policy.name == "baseline"}
    ran = executed(monkeypatch, backend, done_ids=done, made_on=made_on)
    monkeypatch.setattr(cluster, "get_backend", lambda name: backend)
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "0")
    monkeypatch.setenv("SLURM_ARRAY_JOB_ID", "7")
    ledger = slurm_ledger(tmp_path, study, backend)
    if refused:
        for step in (cluster.prepare_step, cluster.task_step):
            with pytest.raises(StudyError, match="vmlinux_sha256 built-here.*built-there"):
                step(ledger)
        assert ran == []
    else:
        assert cluster.prepare_step(ledger) == 0 and cluster.task_step(ledger) == 0
        assert ran == ["desktop-ssd-96"]


def test_a_sweep_and_its_status_leave_an_experiment_kept_on_an_older_instrument(
        tmp_path, monkeypatch):
    """ebizzy's runs made on an older kernel, kept by the study file: the sweep makes only
    iozone-mmap's runs, and the status counts ebizzy's as done, saying why."""
    import dataclasses
    backend = Backend()
    study = dataclasses.replace(
        load_study("seeds-gem5").select(["ebizzy/*/*/r[01]", "iozone-mmap/*/*/r0"]),
        older_instrument=(("ebizzy", "a test's reason"),))
    folder = runs.study_dir(study.name, tmp_path)
    for _, spec in study.runs("qemu"):
        if spec.experiment == "ebizzy":
            identity = runs.run_identity(spec, {"kernel": "k-older", "image": spec.system.name})
            made = record.run_record(identity, study=study.name, experiment="ebizzy",
                                     artefacts={}, status="ok", reason=None,
                                     started_at="2026-01-01T00:00:00+0000", wall_seconds=1.0,
                                     host={})
            (folder / made["run_id"]).mkdir(parents=True)
            (folder / made["run_id"] / "run.json").write_text(json.dumps(made))
    ran = []
    monkeypatch.setattr(sweep, "get_backend", lambda name: backend)
    monkeypatch.setattr(cluster, "get_backend", lambda name: backend)
    monkeypatch.setattr(runs, "execute", lambda spec, *args, **kwargs: (
        ran.append(spec.experiment) or {"status": "ok", "reason": ""}))
    monkeypatch.setattr(sweep.sweeplog_writer, "recover", lambda *args: None)
    outcome = sweep.run_sweep(study, "qemu", tmp_path, jobs=1)
    assert ran == ["iozone-mmap"] * 3 and outcome.skipped == 6
    states = {(s.spec.experiment, s.state, s.reason) for s in cluster.run_states(study, "qemu", tmp_path)}
    assert ("ebizzy", "done", "kept on an older instrument") in states
    assert not {s for s in states if s[0] == "ebizzy" and s[1] != "done"}
    # not kept: the older runs are made again on the current instrument
    ran.clear()
    sweep.run_sweep(dataclasses.replace(study, older_instrument=()), "qemu", tmp_path, jobs=1)
    assert sorted(ran) == ["ebizzy"] * 6 + ["iozone-mmap"] * 3
