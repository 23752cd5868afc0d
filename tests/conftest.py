"""Shared fixtures: the built kernel (cached across runs by content hash)."""

import pytest


@pytest.fixture(scope="session")
def kernel():
    from reclaimstudy.kernel import build_kernel

    return build_kernel()
