"""Shared fixtures: the built kernel (cached across runs by content hash) and the guest
programs built for the host."""

import os
import subprocess

import pytest


@pytest.fixture(scope="session")
def kernel():
    from reclaimstudy.kernel import build_kernel

    return build_kernel()


@pytest.fixture(scope="session")
def guest_programs(tmp_path_factory):
    """Every guest program (workloads/Makefile), built once for the tests that run them
    natively: OUT/bin holds the tools, OUT/workloads one folder per workload."""
    from reclaimstudy.paths import WORKLOADS

    out = tmp_path_factory.mktemp("guest-programs")
    subprocess.run(["make", "-s", "-C", str(WORKLOADS), f"OUT={out}", f"-j{os.cpu_count() or 1}"],
                   check=True)
    return out
