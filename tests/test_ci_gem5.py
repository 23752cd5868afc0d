"""CI's choice of a cached gem5 for its gem5 tests (.ci/cached_gem5.py): the build of
this checkout's gem5-patches/, or none, saying why."""

import importlib.util
import json

from reclaimstudy.artefacts.gem5 import read_series
from reclaimstudy.hashing import file_sha256
from reclaimstudy.paths import REPO

spec = importlib.util.spec_from_file_location("cached_gem5", REPO / ".ci" / "cached_gem5.py")
cached_gem5 = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cached_gem5)


def fake_build(builds, key, patches, disksim=False, built_at="2026-12-01", binary=True):
    folder = builds / key
    (folder / "source" / "build" / "X86").mkdir(parents=True)
    if binary:
        (folder / "source" / "build" / "X86" / "gem5.fast").write_text("")
    manifest = {"gem5_version": read_series().version, "patches": patches, "variant": "fast",
                "key": key, "built_at": built_at}
    if disksim:
        manifest["disksim"] = {"key": "d1"}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder / "source" / "build" / "X86" / "gem5.fast"


def test_the_newest_build_of_this_series_is_chosen_one_with_disksim_first(tmp_path):
    current = [{"name": p.name, "sha256": file_sha256(p)} for p in read_series().patches]
    other = [{**p, "sha256": "0" * 64} for p in current]
    fake_build(tmp_path, "a", current, built_at="2026-12-02")
    with_disksim = fake_build(tmp_path, "b", current, disksim=True, built_at="2026-12-01")
    fake_build(tmp_path, "c", other, disksim=True, built_at="2026-12-03")
    fake_build(tmp_path, "d", current, disksim=True, built_at="2026-12-04", binary=False)
    fake_build(tmp_path, "e", current[:-1], disksim=True, built_at="2026-12-05")
    build, lacks = cached_gem5.current_build(tmp_path)
    assert build.binary == with_disksim and lacks == ""


def test_else_an_earlier_commits_build_saying_which_patches_it_lacks(tmp_path):
    current = [{"name": p.name, "sha256": file_sha256(p)} for p in read_series().patches]
    fake_build(tmp_path, "a", current[:-2], disksim=True, built_at="2026-12-05")
    longest = fake_build(tmp_path, "b", current[:-1], built_at="2026-12-01")
    fake_build(tmp_path, "c", current[1:])  # not a leading part: another series
    build, lacks = cached_gem5.current_build(tmp_path)
    assert build.binary == longest
    assert lacks.endswith(f"of this checkout's gem5-patches/, without {current[-1]['name'][:4]}")


def test_without_one_it_says_what_it_found_instead(tmp_path):
    current = [{"name": p.name, "sha256": file_sha256(p)} for p in read_series().patches]
    fake_build(tmp_path, "c", current[1:])
    fake_build(tmp_path, "d", current, binary=False)
    build, why = cached_gem5.current_build(tmp_path)
    assert build is None
    assert "has this checkout's gem5-patches/" in why
    assert "c (patches " in why and "another series" in why and "d (patches" in why
    assert "no binary" in why
    assert cached_gem5.current_build(tmp_path / "empty")[1].endswith("(none there at all)")
