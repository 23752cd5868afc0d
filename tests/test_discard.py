"""discard_tree: the tree is out of the way at once and deleted in the background."""

import time
from pathlib import Path

from reclaimstudy.artefacts.discard import PREFIX, discard_tree


def _tree(path: Path, files: int = 50) -> Path:
    for i in range(files):
        (path / f"d{i % 5}").mkdir(parents=True, exist_ok=True)
        (path / f"d{i % 5}" / f"f{i}.o").write_bytes(b"x" * 1000)
    return path


def _wait_until_gone(folder: Path, timeout_s: float = 30) -> list[Path]:
    deadline = time.monotonic() + timeout_s
    while (left := list(folder.glob(f"{PREFIX}*"))) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def test_a_discarded_tree_is_gone_at_once_and_deleted_in_the_background(tmp_path):
    tree = _tree(tmp_path / "abc.building-1")
    keep = _tree(tmp_path / "abc")
    doomed = discard_tree(tree)
    assert not tree.exists()
    assert doomed.parent == tmp_path and doomed.name.startswith(PREFIX + "abc.building-1")
    assert _wait_until_gone(tmp_path) == []
    assert len(list(keep.rglob("*.o"))) == 50  # a sibling is not touched


def test_a_tree_left_by_an_earlier_discard_is_deleted_with_the_next(tmp_path):
    # An earlier process died before its rm finished; a same-named tree discarded now
    # must not collide with it.
    _tree(tmp_path / f"{PREFIX}abc.building-1-1")
    discard_tree(_tree(tmp_path / "abc.building-1"))
    assert _wait_until_gone(tmp_path) == []


def test_discarding_nothing_is_not_an_error(tmp_path):
    assert discard_tree(tmp_path / "absent") is None
