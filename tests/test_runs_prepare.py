"""A long sweep prepares a system once; an image pruned from the cache since then is
built again before the next run, never run as a missing disk."""

import json

from reclaimstudy.artefacts.image import Image
from reclaimstudy.backends.base import Backend, Outcome, Prepared
from reclaimstudy.campaigns import runs
from reclaimstudy.config.policies import get_policy
from reclaimstudy.config.systems import get_system
from reclaimstudy.config.workloads import get_workload


def an_image(directory):
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "manifest.json").write_text(json.dumps({"key": "i1"}))
    (directory / "root.img").write_bytes(b"")
    return Image(directory)


class CountingBackend(Backend):
    name = "qemu"
    console_file = "console.log"

    def __init__(self, image):
        self.image, self.prepares, self.runs_on = image, 0, []

    def identity(self, spec):
        return {"kernel": "k1", "image": "i1"}

    def prepare(self, spec):
        self.prepares += 1
        if not self.image.in_cache():
            an_image(self.image.directory)  # what build_image does: the same key again
        return Prepared({"kernel": "k1", "image": "i1"}, {}, {"image": self.image})

    def run(self, spec, prepared, job, run_dir, timeout_s=None, work=None):
        self.runs_on.append(prepared.parts["image"].in_cache())
        (run_dir / self.console_file).write_text('@@reclaim {"event":"job_end","status":0}\n')
        return Outcome(None, {})


def test_a_pruned_image_is_prepared_again_and_a_used_one_marked(tmp_path):
    image = an_image(tmp_path / "cache" / "i1")
    backend = CountingBackend(image)
    workload = get_workload("smoke")
    spec = runs.RunSpec("s", get_system("ci-tiny"), get_policy("baseline"), workload,
                        workload.arguments(), 0, "qemu")
    prepared = backend.prepare(spec)
    manifest = image.directory / "manifest.json"
    before = manifest.stat().st_mtime_ns
    runs.execute(spec, backend, results=tmp_path / "results", prepared=prepared)
    assert backend.prepares == 1 and manifest.stat().st_mtime_ns >= before
    for path in image.directory.iterdir():  # pruned while the sweep went on
        path.unlink()
    runs.execute(spec, backend, results=tmp_path / "again", prepared=prepared)
    assert backend.prepares == 2 and backend.runs_on == [True, True]
