"""A sweep's time estimate: each run priced from the closest earlier runs of its study."""

import pytest

from reclaimstudy.campaigns import runs
from reclaimstudy.campaigns.estimate import cost_book, duration, remaining_seconds
from reclaimstudy.config.policies import get_policy
from reclaimstudy.config.systems import get_system
from reclaimstudy.config.workloads import get_workload
from reclaimstudy.results import record
from tests.runfactory import make_record, write_run


def spec(workload, policy="baseline", system="desktop-hdd-128", backend="gem5"):
    return runs.RunSpec("seeds-gem5", get_system(system), get_policy(policy),
                        get_workload(workload), {}, 0, backend)


OLD_GUEST = {"kernel": "k1", "image": "i1", "gem5": "g", "checkpoint": "c1"}
NEW_GUEST = {"kernel": "k2", "image": "i2", "gem5": "g", "checkpoint": "c2"}


def finished(study_dir, name, workload, policy, wall, status="ok", backend="gem5",
             system="desktop-hdd-128", artefacts=OLD_GUEST):
    write_run(study_dir, make_record("seeds-gem5", workload, policy, system, backend=backend,
                                     status=status, wall_seconds=wall,
                                     artefacts=None if backend == "qemu" else artefacts), name)


@pytest.fixture
def book(tmp_path):
    study = tmp_path / "seeds-gem5"
    finished(study, "a", "hot-stream", "baseline", 3000)
    finished(study, "b", "hot-stream", "exec-protect-off", 3100)
    finished(study, "c", "lazyfree", "baseline", 400)
    finished(study, "d", "lazyfree", "madv-free-off", 99999, status="failed")  # not a price
    finished(study, "e", "lazyfree", "baseline", 20, backend="qemu")  # another backend
    (study / record.PARTIAL / "f").mkdir(parents=True)  # a half-written run: no run.json
    return cost_book(study)


def test_a_run_is_priced_from_the_closest_earlier_runs(book):
    assert book.known() == 4  # the failed run is not counted
    assert book.price(spec("hot-stream", "baseline")) == 3000  # same policy
    assert book.price(spec("hot-stream", "mglru")) == 3050  # same workload and system
    assert book.price(spec("lazyfree", "madv-free-off")) == 400  # the failed run is no price
    assert book.price(spec("lazyfree", "baseline", backend="qemu")) == 20
    # nothing like it: the mean of every run on the same backend, never another one's
    assert book.price(spec("thrash", "baseline")) == pytest.approx((3000 + 3100 + 400) / 3)
    assert book.price(spec("thrash", "baseline", backend="qemu")) == 20
    # and a sweep's status line can tell a price from runs of the workload from a guess
    assert book.priced(spec("hot-stream", "mglru")).basis == "study"
    assert book.priced(spec("thrash", "baseline")).basis == "backend"
    assert book.priced(spec("hot-stream", "baseline", backend="qemu")).basis == "backend"


def test_remaining_time_counts_what_is_left_of_running_runs_and_shares_the_jobs(book):
    waiting = [spec("hot-stream", "mglru"), spec("lazyfree", "baseline")]
    running = [(spec("hot-stream", "baseline"), 1000.0), (spec("lazyfree", "mglru"), 900.0)]
    # 3050 + 400 waiting; 3000 - 1000 left of one, the other is past its price: 0
    assert remaining_seconds(book, waiting, running, jobs=2) == pytest.approx((3450 + 2000) / 2)
    assert remaining_seconds(book, [], [], jobs=2) == 0


def test_a_resumed_run_is_priced_at_all_its_segments_not_its_last_attempt(tmp_path):
    study = tmp_path / "seeds-gem5"
    write_run(study, make_record("seeds-gem5", "lazyfree", "baseline", "desktop-hdd-128",
                                 backend="gem5", wall_seconds=150, artefacts=OLD_GUEST,
                                 backend_info={"wall_seconds": 680, "resumed_at_segment": 3}),
              "resumed")
    finished(study, "whole", "lazyfree", "baseline", 700)
    assert cost_book(study).price(spec("lazyfree", "baseline")) == pytest.approx(690)


def test_with_no_earlier_runs_there_is_no_estimate(tmp_path):
    empty = cost_book(tmp_path / "nothing-yet")
    assert empty.known() == 0 and empty.price(spec("lazyfree")) is None
    assert remaining_seconds(empty, [spec("lazyfree")], [], jobs=1) is None


def test_durations_read_as_seconds_minutes_or_hours():
    assert [duration(s) for s in (45, 720, 3 * 3600 + 1440)] == ["45 s", "12 min", "3.4 h"]


def test_runs_on_the_sweeps_own_artefacts_are_the_better_price(tmp_path):
    study = tmp_path / "seeds-gem5"
    finished(study, "old-a", "hot-stream", "baseline", 3000)
    finished(study, "old-b", "hot-stream", "mglru", 2900)
    finished(study, "new-a", "hot-stream", "baseline", 1100, artefacts=NEW_GUEST)
    current = [{"kernel": "k2", "image": "i2", "gem5": "g", "checkpoint": "c2"}]
    book = cost_book(study, current)
    assert book.price(spec("hot-stream", "baseline")) == 1100  # the old guest's 3000 set aside
    # the new guest's run of the same workload beats the old guest's of the same policy
    assert book.price(spec("hot-stream", "mglru")) == 1100
    assert book.price(spec("hot-stream", "exec-protect-off")) == 1100
    # nothing of the workload on the new guest: the old guest's runs of it come next
    finished(study, "old-c", "thrash", "baseline", 5000)
    assert cost_book(study, current).price(spec("thrash", "mglru")) == 5000
    assert cost_book(study).price(spec("hot-stream", "baseline")) == 2050  # no preference: mean


def test_a_workload_never_run_is_priced_at_every_runs_mean_not_at_the_sweeps_guests(tmp_path):
    # The sweep's guest (a 64 MiB checkpoint) has one run so far, an hour-long desktop;
    # the cheap workloads ran on another guest. A new workload is a guess from all of them.
    study = tmp_path / "seeds-gem5"
    finished(study, "desk", "desktop-launch", "baseline", 3600, artefacts=NEW_GUEST)
    finished(study, "lf-a", "lazyfree", "baseline", 200)
    finished(study, "lf-b", "lazyfree", "mglru", 220)
    book = cost_book(study, [NEW_GUEST])
    assert book.price(spec("hot-stream")) == pytest.approx((3600 + 200 + 220) / 3)
    assert book.price(spec("desktop-launch", "mglru")) == 3600


def test_a_workload_not_run_here_is_priced_from_the_published_runs_of_the_study_beside(
        tmp_path):
    # disksim's first desktop runs: its own finished runs are all make-grep (~25 min);
    # seeds-gem5's published desktop runs (~an hour) price the desktop, not make-grep's.
    here = tmp_path / "disksim"
    published = tmp_path / "published" / "seeds-gem5"
    finished(here, "mg", "make-grep", "baseline", 1500, artefacts=NEW_GUEST)
    # on its own system (another disk model), as a study beside runs
    finished(published, "desk-a", "desktop-launch", "baseline", 3000, system="desktop-hdd-64")
    finished(published, "desk-b", "desktop-launch", "mglru", 4000, system="desktop-hdd-64")
    finished(published, "mg-pub", "make-grep", "baseline", 900, system="desktop-hdd-64")
    book = cost_book(here, [NEW_GUEST], beside=("seeds-gem5", published))
    assert book.priced(spec("desktop-launch")).seconds == 3500  # any of its policies
    # on the beside study's own system, its closest runs
    assert book.price(spec("desktop-launch", system="desktop-hdd-64")) == 3000
    assert book.priced(spec("desktop-launch")).basis == "beside"
    # what this study has run prices itself, even on another guest: never the study beside
    assert book.priced(spec("make-grep", "mglru")).seconds == 1500
    assert book.priced(spec("make-grep", "mglru")).basis == "study"
    old_guest_only = cost_book(here, [{"kernel": "k9"}], beside=("seeds-gem5", published))
    assert old_guest_only.price(spec("make-grep")) == 1500
    assert book.known() == 1 and book.known(own=False) == 3
    assert book.workload_runs("gem5", "desktop-launch", own=False) == 2
    # a workload neither study ran: this study's backend mean, not the two studies' mixed
    assert book.priced(spec("thrash")).seconds == 1500
    assert book.priced(spec("thrash")).basis == "backend"
    # with no run of its own on the backend, the study beside's mean is the guess
    assert book.priced(spec("thrash", backend="qemu")).seconds is None
    nothing_here = cost_book(tmp_path / "new", [], beside=("seeds-gem5", published))
    assert nothing_here.price(spec("thrash")) == pytest.approx((3000 + 4000 + 900) / 3)


def test_a_sweep_says_which_runs_priced_its_estimate(tmp_path):
    from reclaimstudy.campaigns.sweep import _priced_from
    here = tmp_path / "disksim"
    published = tmp_path / "published" / "seeds-gem5"
    finished(here, "mg", "make-grep", "baseline", 1500)
    finished(published, "desk-a", "desktop-launch", "baseline", 3000)
    finished(published, "desk-b", "desktop-launch", "mglru", 4000)
    book = cost_book(here, [], beside=("seeds-gem5", published))
    todo = [spec("make-grep", "mglru"), spec("desktop-launch"), spec("desktop-launch", "mglru")]
    assert _priced_from(book, todo) == (
        "priced from 1 earlier run(s) of this study and 2 published desktop-launch run(s) "
        "of seeds-gem5 (none run here yet)")
    assert _priced_from(book, todo[:1]) == "priced from 1 earlier run(s) of this study"
