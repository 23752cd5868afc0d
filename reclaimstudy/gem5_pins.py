"""Make a gem5 checkpoint's interrupt controllers agree with the wires gem5 restores.

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

import os
from pathlib import Path

KEY = "pinStates="


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
        partial = path.with_name(path.name + ".tmp")
        partial.write_text("".join(lines))
        os.replace(partial, path)
    return lowered
