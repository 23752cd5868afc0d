"""Before every restore (gem5_backend.simulate), a checkpoint's interrupt controllers are
made to agree with the wires gem5 restores low, and its drives' state is read
(reclaimstudy/backends/gem5/checkpoint.py)."""

import json
import sys
from pathlib import Path

from reclaimstudy.backends.gem5 import backend as gem5_backend
from reclaimstudy.backends.gem5.checkpoint import drive_state, lower_interrupt_pins

# The three controllers' sections as gem5 v24.0.0.1 writes them (shortened), from the
# checkpoint where thrash-control/baseline/r3 lost its disk: the IDE line high.
CHECKPOINT = """[board.pc.south_bridge.pic1]
mode=0
pinStates=false false false false false false false false

[board.pc.south_bridge.pic2]
pinStates=false false false false false false true false
IRR=0

[board.pc.south_bridge.io_apic]
regSel=16
pinStates=false false false false false false false false false false false false false false true false false false false false false false false false

[board.pc.south_bridge.ide.disks1]
intrPending=true

[board.pc.south_bridge.ide.disks0.timing]
rng=5489 1 2 3
nextSector=1892976
headFree=2012500000000
cachedBytes=20480
cachedOnMedia=1999000000000 2004000000000 2008000000000 2012500000000
cachedSizes=8192 4096 4096 4096

[board.pc.south_bridge.ide.disks1.timing]
rng=5489 4 5 6
busyUntil=1999000000000

[root.globals]
unserializedCurTick=0
curTick=2000000000000
"""


def checkpoint(tmp_path: Path, text: str) -> Path:
    (tmp_path / "cpt").mkdir()
    (tmp_path / "cpt" / "m5.cpt").write_text(text)
    return tmp_path / "cpt"


def test_every_high_pin_is_lowered_and_named_and_nothing_else_changes(tmp_path):
    cpt = checkpoint(tmp_path, CHECKPOINT)
    assert lower_interrupt_pins(cpt) == ["board.pc.south_bridge.pic2 pin 6",
                                         "board.pc.south_bridge.io_apic pin 14"]
    after = (cpt / "m5.cpt").read_text()
    assert "true" not in after.replace("intrPending=true", "")
    assert "intrPending=true" in after, "a device's own pending interrupt is its state"
    assert after.replace("true", "false") == CHECKPOINT.replace("true", "false")
    assert [p.name for p in cpt.iterdir()] == ["m5.cpt"]
    assert lower_interrupt_pins(cpt) == [], "a second pass finds nothing"


def test_a_checkpoint_with_every_pin_low_is_left_alone(tmp_path):
    low = CHECKPOINT.replace("false true false\n", "false false false\n") \
        .replace("false true false false", "false false false false")
    cpt = checkpoint(tmp_path, low)
    before = (cpt / "m5.cpt").stat().st_mtime_ns
    assert lower_interrupt_pins(cpt) == []
    assert (cpt / "m5.cpt").read_text() == low and (cpt / "m5.cpt").stat().st_mtime_ns == before


FAKE_GEM5 = """#!{python}
import json, shutil, sys
outdir, params = sys.argv[2], json.load(open(sys.argv[-1]))
shutil.copy(params["checkpoint"] + "/m5.cpt", outdir + "/seen.cpt")
json.dump({{"status": "exit", "sim_seconds": 1.0}}, open(outdir + "/result.json", "w"))
"""


def test_gem5_restores_the_checkpoint_with_its_pins_lowered_and_the_result_says_which(tmp_path):
    binary = tmp_path / "gem5.opt"
    binary.write_text(FAKE_GEM5.format(python=sys.executable))
    binary.chmod(0o755)
    gem5 = gem5_backend.Gem5(binary, "24.0.0.1", "0" * 64, {}, None)
    cpt = checkpoint(tmp_path, CHECKPOINT)
    out = tmp_path / "out"
    result = gem5_backend.simulate(gem5, {"mode": "run", "checkpoint": str(cpt)}, out, 60)
    assert result["status"] == "exit"
    assert result["pins_lowered"] == ["board.pc.south_bridge.pic2 pin 6",
                                      "board.pc.south_bridge.io_apic pin 14"]
    assert "pinStates" in (out / "seen.cpt").read_text()
    assert "true" not in (out / "seen.cpt").read_text().replace("intrPending=true", "")
    boot = gem5_backend.simulate(gem5, {"mode": "boot", "checkpoint": str(tmp_path / "new")},
                                 tmp_path / "boot", 60)
    assert boot["pins_lowered"] == [], "a boot saves a checkpoint, it restores none"
    assert result["drives_at_restore"]["board.pc.south_bridge.ide.disks0.timing"] == \
        {"cached_kib": 12.0, "busy_ms": 12.5}
    assert json.loads((out / "params.json").read_text())["checkpoint"] == str(cpt)


def test_the_drives_state_is_read_at_the_checkpoints_tick(tmp_path):
    """The hard disk: 12 KiB cached and not yet on the media (8 KiB more written before the
    checkpoint's tick), its head busy 12.5 ms more; the flash device done."""
    assert drive_state(checkpoint(tmp_path, CHECKPOINT)) == {
        "board.pc.south_bridge.ide.disks0.timing": {"cached_kib": 12.0, "busy_ms": 12.5},
        "board.pc.south_bridge.ide.disks1.timing": {"cached_kib": 0.0, "busy_ms": 0.0}}


def test_a_checkpoint_from_a_gem5_without_0004_has_no_drive_state(tmp_path):
    old = CHECKPOINT.replace("rng=", "seed=")
    assert drive_state(checkpoint(tmp_path, old)) == {}


def test_boots_of_two_drive_models_are_two_checkpoints():
    """0004 keeps the drive's state in the boot checkpoint: a run may take it over only
    onto the same drive (desktop-hdd-64 and desktop-hdd2001-64 differ only there)."""
    from reclaimstudy.config.systems import get_system

    def key(name):
        return gem5_backend._checkpoint_key("sim", "kernel", "image", 250, get_system(name))
    new, old = get_system("desktop-hdd-64"), get_system("desktop-hdd2001-64")
    assert new.memory_layout() == old.memory_layout()
    assert key("desktop-hdd-64") != key("desktop-hdd2001-64")
    assert key("desktop-hdd-64") == key("desktop-hdd-64")


def test_the_config_script_is_the_one_its_keys_were_decided_for():
    """A change to configs/gem5/reclaim_fs.py fails here until it is decided which drive
    models' runs it changes (gem5_backend.SCRIPT_KEYS): their key takes the new hash."""
    from reclaimstudy.hashing import file_sha256
    assert file_sha256(gem5_backend.CONFIG_SCRIPT) == gem5_backend.SCRIPT_SHA256, (
        f"{gem5_backend.CONFIG_SCRIPT} changed (sha256 {file_sha256(gem5_backend.CONFIG_SCRIPT)}): "
        f"set SCRIPT_SHA256 to it, and in SCRIPT_KEYS give each drive model whose systems "
        f"now simulate otherwise the new hash (their runs start again); a model whose path "
        f"did not change keeps its key")
    assert gem5_backend.SCRIPT_SHA256 in gem5_backend.SCRIPT_KEYS.values()  # the newest change


def test_a_new_drive_models_path_leaves_the_other_models_runs_their_checkpoints(monkeypatch):
    """Each drive model's checkpoint follows its own entry of SCRIPT_KEYS alone."""
    from reclaimstudy.config.systems import get_system

    def keys():
        return {name: gem5_backend._checkpoint_key("sim", "kernel", "image", 250, get_system(name))
                for name in ("desktop-hdd-64", "desktop-disksim-ibm18es-64", "desktop-sata-ssd-64",
                             "desktop-nvme-ssd-64")}
    before = keys()
    monkeypatch.setitem(gem5_backend.SCRIPT_KEYS, "simplessd", "f" * 64)
    after = keys()
    assert after["desktop-sata-ssd-64"] != before["desktop-sata-ssd-64"]
    kept = ("desktop-hdd-64", "desktop-disksim-ibm18es-64", "desktop-nvme-ssd-64")
    assert {k: after[k] for k in kept} == {k: before[k] for k in kept}
