"""Replacing a folder in one step (the published study, while timers and people read it)."""

from reclaimstudy.util import swapdir
from reclaimstudy.util.swapdir import replace_dir


def _folder(path, text):
    path.mkdir()
    (path / "f").write_text(text)
    return path


def test_the_new_folder_takes_the_old_ones_place_and_the_old_is_handed_back(tmp_path):
    target, new = _folder(tmp_path / "t", "old"), _folder(tmp_path / "t.new", "new")
    old = replace_dir(new, target)
    assert (target / "f").read_text() == "new"
    assert (old / "f").read_text() == "old"
    assert old == new  # exchanged in place: this machine's file system can


def test_where_the_system_cannot_exchange_two_renames_do(tmp_path, monkeypatch):
    monkeypatch.setattr(swapdir, "exchange", lambda a, b: False)
    target, new = _folder(tmp_path / "t", "old"), _folder(tmp_path / "t.new", "new")
    old = replace_dir(new, target)
    assert (target / "f").read_text() == "new"
    assert old == tmp_path / "t.old" and (old / "f").read_text() == "old"
    assert not new.exists()


def test_a_first_folder_is_just_moved(tmp_path):
    new = _folder(tmp_path / "t.new", "new")
    assert replace_dir(new, tmp_path / "t") is None
    assert (tmp_path / "t" / "f").read_text() == "new"
