"""What the study reads and mends in a gem5 checkpoint before restoring it.

The drives' state (drive_state): what gem5-patches/0004 carries across a restore, and
what every restore threw away before it (a hard disk's cached writes and queued work),
recorded per segment so a run shows how much rode on its restores.

The interrupt controllers (lower_interrupt_pins): made to agree with the wires gem5
restores.

gem5 v24.0.0.1 saves each x86 interrupt controller's view of its input lines (the I/O
APIC's and both 8259s' `pinStates`) but not the lines themselves (SignalSinkPort's state),
which come back low. A line that was high at the checkpoint then disagrees with its
controller: the device's next lower() reaches nobody (the wire is already low), the
controller keeps the line high, and the device's next raise() is taken for no edge and
dropped. Seen on the IDE line: a checkpoint taken while the swap disk's interrupt was in
service lost the root disk's next completion, and the guest's disk timed out for good
(thrash-control/baseline/r3; findings.md).

Lowering every saved pin state before a restore makes each controller agree with its
wire, so it answers the device's next change exactly as an uninterrupted run would: a
lower() leaves the line low, a raise() is an edge. Nothing else reads these states.
"""

import configparser
import os
import tempfile
from pathlib import Path

from reclaimstudy.errors import StudyError

KEY = "pinStates="
TICKS_PER_MS = 1e9


def lower_interrupt_pins(checkpoint: Path) -> list[str]:
    """Rewrite checkpoint/m5.cpt with every interrupt controller's pins low; returns the
    pins that were high, as "SECTION pin N" (empty: the file is left untouched)."""
    path = checkpoint / "m5.cpt"
    lines = path.read_text().splitlines(keepends=True)
    section, lowered = "", []
    for index, line in enumerate(lines):
        if line.startswith("["):
            section = line.strip().strip("[]")
        elif line.startswith(KEY):
            states = line[len(KEY):].split()
            high = [pin for pin, state in enumerate(states) if state == "true"]
            if high:
                lowered += [f"{section} pin {pin}" for pin in high]
                lines[index] = KEY + " ".join("false" for _ in states) + "\n"
    if lowered:  # replaced whole, so a run killed mid-write never sees half a checkpoint
        with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=path.name,
                                         suffix=".tmp", delete=False) as partial:
            partial.write("".join(lines))
        os.replace(partial.name, path)
    return lowered


def drive_state(checkpoint: Path) -> dict[str, dict]:
    """Per modelled drive (its section, e.g. board.pc.south_bridge.ide.disks.timing):
    the writes in its cache not yet on the media (KiB) and how long its queued media work
    had to run (ms) at the checkpoint's tick. Empty for a checkpoint without 0004's drive
    state."""
    parser = configparser.ConfigParser(interpolation=None, strict=False, delimiters=("=",))
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(checkpoint / "m5.cpt")
    if not parser.has_option("root.globals", "curTick"):
        raise StudyError(f"{checkpoint / 'm5.cpt'} has no [root.globals] curTick: not a "
                         f"whole gem5 checkpoint")
    now = int(parser["root.globals"]["curTick"])
    drives = {}
    for section in parser.sections():
        values = parser[section]
        busy = values.get("headFree", values.get("busyUntil"))
        if section.endswith(".timing") and "rng" in values and busy is not None:
            # The cache lets a write go only when the next command comes: count those
            # not yet on the media at this tick.
            on_media = [int(t) for t in values.get("cachedOnMedia", "").split()]
            sizes = [int(b) for b in values.get("cachedSizes", "").split()]
            pending = sum(size for when, size in zip(on_media, sizes) if when > now)
            drives[section] = {"cached_kib": round(pending / 1024, 1),
                               "busy_ms": round(max(0, int(busy) - now) / TICKS_PER_MS, 3)}
    return drives
