"""Reclaim policies: named settings of the kernel knobs (configs/policies.toml)."""

from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from reclaimstudy.config.tomlfile import config_error, load, whole_number
from reclaimstudy.errors import StudyError
from reclaimstudy.paths import CONFIGS

POLICIES_FILE = CONFIGS / "policies.toml"

# The knobs our kernel patches add: (minimum, maximum, default). Must match
# kernel-patches/0001-reclaim-knobs-sysctls.patch; the kernel test checks it in a guest.
KNOBS = {
    "exec_protect": (0, 3, 3),
    "use_once": (0, 3, 3),
    "refault_scan_anon": (0, 1, 1),
    "madv_free": (0, 1, 1),
    "refault_active_file_only": (0, 1, 0),
}
# The [name.knobs] table: each knob an integer in its range, the default when absent.
Knobs = create_model(
    "Knobs", __config__=ConfigDict(extra="forbid", frozen=True, strict=True),
    **{knob: (Annotated[int, whole_number(low, high)], default)
       for knob, (low, high, default) in KNOBS.items()})


class Policy(BaseModel):
    """One [name] table of policies.toml; every knob present, defaults filled in."""
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    name: str
    description: str
    knobs: Knobs = Knobs()
    lru_gen: bool = False
    seed: str | None = None

    def identity(self) -> dict:
        return {"name": self.name, "knobs": dict(sorted(self.knobs.model_dump().items())),
                "lru_gen": self.lru_gen}

    def job_knobs(self) -> str:
        return " ".join(f"{name}={value}" for name, value in sorted(self.knobs.model_dump().items()))


def _policy(name: str, table: dict, path: Path) -> Policy:
    try:
        return Policy.model_validate({**table, "name": name})
    except ValidationError as error:
        raise config_error(f"{path} [{name}]", error, Policy) from None


def load_policies(path: Path = POLICIES_FILE) -> dict[str, Policy]:
    return {name: _policy(name, table, path) for name, table in load(path).items()}


def get_policy(name: str, path: Path = POLICIES_FILE) -> Policy:
    policies = load_policies(path)
    if name not in policies:
        raise StudyError(f"unknown policy '{name}'; allowed (from {path}): {', '.join(policies)}")
    return policies[name]
