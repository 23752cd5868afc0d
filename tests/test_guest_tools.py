"""The guest programs, run natively: m5's argument handling, guestctl's protocol lines."""

import os
import subprocess
from pathlib import Path

import pytest

from reclaimstudy.results.console import parse_console


@pytest.fixture(scope="module")
def guest_bin(guest_programs) -> Path:
    return guest_programs / "bin"


def m5(guest_bin, *args, backend="qemu"):
    env = dict(os.environ, RECLAIM_BACKEND=backend)
    return subprocess.run([str(guest_bin / "m5"), *args], capture_output=True, text=True, env=env)


@pytest.mark.parametrize("args, op, values", [
    (["exit"], 0x21, [0, 0]),
    (["exit", "1000"], 0x21, [1000, 0]),
    (["fail", "0", "3"], 0x22, [0, 3]),
    (["dumpresetstats", "5", "10"], 0x42, [5, 10]),
    (["resetstats"], 0x40, [0, 0]),
    (["dumpstats", "0x10"], 0x41, [16, 0]),
    (["checkpoint"], 0x43, [0, 0]),
    (["workbegin", "7", "1"], 0x5A, [7, 1]),
    (["workend", "7"], 0x5B, [7, 0]),
])
def test_m5_parses_each_command_into_its_op_and_arguments(guest_bin, args, op, values):
    result = m5(guest_bin, "--dry-run", *args)
    assert result.returncode == 0, result.stderr
    fields = dict(word.split("=") for word in result.stdout.split())
    assert int(fields["op"], 16) == op
    assert [int(v) for v in fields["args"].split(",")][:2] == values


@pytest.mark.parametrize("args, message", [
    ([], "usage: m5"),
    (["bogus"], "unknown command 'bogus'"),
    (["--turbo", "exit"], "unknown option '--turbo'"),
    (["exit", "soon"], "bad DELAY_NS 'soon': expected a non-negative integer"),
    (["exit", "-5"], "bad DELAY_NS '-5'"),
    (["exit", "1", "2"], "exit takes at most 1 argument(s)"),
    (["fail", "0"], "fail needs DELAY_NS CODE"),
    (["readfile", "x"], "readfile takes no arguments"),
])
def test_m5_rejects_bad_arguments_with_exit_2(guest_bin, args, message):
    result = m5(guest_bin, "--dry-run", *args)
    assert result.returncode == 2
    assert message in result.stderr


@pytest.mark.parametrize("backend", ["qemu", "native"])
def test_m5_is_a_harmless_no_op_off_gem5(guest_bin, backend):
    # Issuing the instruction form natively would die of SIGILL; it must not be issued.
    result = m5(guest_bin, "--instruction", "exit", backend=backend)
    assert result.returncode == 0
    assert f"backend is {backend}, not gem5: 'exit' not issued" in result.stderr
    assert m5(guest_bin, "readfile", backend=backend).stdout == ""


def test_guestctl_prints_phase_marks_with_vmstat_that_the_parser_reads(guest_bin, tmp_path):
    env = dict(os.environ, RECLAIM_BACKEND="qemu", RECLAIM_STATE_DIR=str(tmp_path))
    out = ""
    for args in (["phase", "setup"], ["phase", "stream"], ["done"]):
        out += subprocess.run([str(guest_bin / "guestctl"), *args], capture_output=True,
                              text=True, env=env, check=True).stdout
    result = parse_console(out + '@@reclaim {"event":"job_end","status":0}\n')
    assert result.status == "ok" and result.garbled == []
    assert [(p["name"], p["index"]) for p in result.phases] == [("setup", 0), ("stream", 1)]
    assert result.of("phases_done")[0]["index"] == 2
    for phase in result.phases:
        assert phase["vmstat"]["pgmajfault"] >= 0 and "nr_free_pages" in phase["vmstat"]
    assert (tmp_path / "phases").read_text().strip() == "3"


def test_guestctl_rejects_a_bad_phase_name(guest_bin):
    result = subprocess.run([str(guest_bin / "guestctl"), "phase", "two words"],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "bad phase name 'two words'" in result.stderr
