"""Long-running host commands with a progress display and a full log on disk."""

import re
import subprocess
import sys
import time
from collections import deque
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from reclaimstudy.errors import StudyError

console = Console(stderr=True, soft_wrap=True)


def run_logged(cmd, cwd: Path, log_path: Path, label: str, step_pattern: str | None = None,
               expected_steps: int | None = None, env=None) -> int:
    """Run `cmd`, writing all its output to `log_path`, and show progress.

    Progress counts output lines matching `step_pattern` against `expected_steps`
    (an estimate: the bar may finish early or late). On a terminal this is a live
    bar; elsewhere (CI, pipes) a plain line every 10%. Returns the number of steps
    seen. Raises StudyError with the log's tail when the command fails.
    """
    pattern = re.compile(step_pattern) if step_pattern else None
    tail: deque[str] = deque(maxlen=25)
    steps = 0
    started = time.monotonic()
    log_path.parent.mkdir(parents=True, exist_ok=True)
    live = console.is_terminal
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), console=console, disable=not live)
    with open(log_path, "w", buffering=1) as log, progress:
        task = progress.add_task(label, total=expected_steps)
        next_report = 0.1
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, errors="replace", env=env)
        assert proc.stdout is not None  # stdout=PIPE
        for line in proc.stdout:
            log.write(line)
            tail.append(line.rstrip())
            if pattern and pattern.search(line):
                steps += 1
                progress.update(task, completed=steps)
                if not live and expected_steps and steps / expected_steps >= next_report:
                    print(f"{label}: {steps}/~{expected_steps} steps, "
                          f"{time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
                    next_report += 0.1
        code = proc.wait()
    if code != 0:
        shown = "\n".join(tail)
        raise StudyError(f"{label} failed (exit {code}); full log: {log_path}\n{shown}")
    return steps
