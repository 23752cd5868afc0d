"""The guest programs' sysroot (reclaimstudy/artefacts/image.py guest_sysroot), with mmdebstrap
replaced by a stand-in that lays out what it would: the package versions come from the
names of the packages it downloaded, a build that names none is refused, and what a
killed build left behind is cleared."""

from pathlib import Path

import pytest

from reclaimstudy.artefacts import image
from reclaimstudy.errors import StudyError


def fake_mmdebstrap(monkeypatch, tmp_path, debs: list[str]) -> list[list[str]]:
    calls = []
    monkeypatch.setenv("RECLAIMSTUDY_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(image.hostdeps, "require_tool", lambda tool: f"/usr/bin/{tool}")

    def run_logged(cmd, **_):
        calls.append(cmd)
        target = Path(cmd[cmd.index("bookworm") + 1])
        archives = target / "var/cache/apt/archives"
        archives.mkdir(parents=True)
        (target / "usr/lib/x86_64-linux-gnu").mkdir(parents=True)
        for name in debs:
            (archives / name).write_bytes(b"")
    monkeypatch.setattr(image, "run_logged", run_logged)
    return calls


def test_versions_come_from_the_downloaded_packages_names(monkeypatch, tmp_path):
    calls = fake_mmdebstrap(monkeypatch, tmp_path, ["libc6-dev_2.36-9+deb12u14_amd64.deb",
                                                    "libcrypt1_1%3a4.4.33-2_amd64.deb"])
    stale = tmp_path / "cache" / "sysroot" / f"{image.sysroot_key()}.partial-99999"
    stale.mkdir(parents=True)  # a build killed before it finished
    root, manifest = image.guest_sysroot()
    assert manifest["packages"] == {"libc6-dev": "2.36-9+deb12u14", "libcrypt1": "1:4.4.33-2"}
    assert not list((root / "var/cache/apt/archives").glob("*.deb")) and not stale.exists()
    [cmd] = calls  # one source line, the frozen main suite's
    assert cmd[-1] == "deb http://deb.debian.org/debian bookworm main"
    assert "--variant=extract" in cmd and "--include=libc6-dev" in cmd
    assert image.guest_sysroot() == (root, manifest) and len(calls) == 1  # cached


def test_a_sysroot_without_its_packages_versions_is_refused(monkeypatch, tmp_path):
    fake_mmdebstrap(monkeypatch, tmp_path, ["libcrypt1_1%3a4.4.33-2_amd64.deb"])
    with pytest.raises(StudyError, match=r"no version found for libc6-dev"):
        image.guest_sysroot()
    assert not (tmp_path / "cache" / "sysroot" / image.sysroot_key()).exists()


def test_a_mirror_of_the_same_archive_replaces_the_url_only(monkeypatch, tmp_path):
    monkeypatch.setenv("RECLAIMSTUDY_DEBIAN_MIRROR", "http://mirror.example/debian")
    spec = image.rootfs_spec()
    key = image.sysroot_key()
    assert image.debian_source(spec) == "deb http://mirror.example/debian bookworm main"
    monkeypatch.delenv("RECLAIMSTUDY_DEBIAN_MIRROR")
    assert image.sysroot_key() == key  # not an input: the checksums say if it gave the same
