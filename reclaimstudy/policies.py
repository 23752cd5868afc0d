"""Reclaim policies: named settings of the kernel knobs (configs/policies.toml)."""

from dataclasses import dataclass, field
from pathlib import Path

from reclaimstudy.errors import StudyError
from reclaimstudy.paths import CONFIGS
from reclaimstudy.tomlfile import check_keys, load

POLICIES_FILE = CONFIGS / "policies.toml"

# The knobs our kernel patches add: (minimum, maximum, default). Must match
# kernel-patches/0001-reclaim-knobs-sysctls.patch; the kernel test checks it in a guest.
KNOBS = {
    "exec_protect": (0, 1, 1),
    "use_once": (0, 3, 3),
    "refault_scan_anon": (0, 1, 1),
    "madv_free": (0, 1, 1),
}


@dataclass(frozen=True)
class Policy:
    name: str
    description: str
    knobs: dict = field(hash=False)  # every knob, defaults filled in
    lru_gen: bool = False
    seed: str | None = None

    def identity(self) -> dict:
        return {"name": self.name, "knobs": dict(sorted(self.knobs.items())),
                "lru_gen": self.lru_gen}

    def job_knobs(self) -> str:
        return " ".join(f"{name}={value}" for name, value in sorted(self.knobs.items()))


def _policy(name: str, table: dict, where: str) -> Policy:
    check_keys(where, table, {"description", "seed", "knobs", "lru_gen"}, {"description"})
    knobs = {knob: default for knob, (_, _, default) in KNOBS.items()}
    for knob, value in table.get("knobs", {}).items():
        if knob not in KNOBS:
            raise StudyError(f"{where}: unknown knob '{knob}'; allowed: {', '.join(KNOBS)}")
        low, high, _ = KNOBS[knob]
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise StudyError(f"{where}: knob {knob} = {value!r}; allowed: integers {low}..{high}")
        knobs[knob] = value
    lru_gen = table.get("lru_gen", False)
    if not isinstance(lru_gen, bool):
        raise StudyError(f"{where}: lru_gen = {lru_gen!r}; allowed: true or false")
    return Policy(name, table["description"], knobs, lru_gen, table.get("seed"))


def load_policies(path: Path = POLICIES_FILE) -> dict[str, Policy]:
    return {name: _policy(name, table, f"{path} [{name}]") for name, table in load(path).items()}


def get_policy(name: str, path: Path = POLICIES_FILE) -> Policy:
    policies = load_policies(path)
    if name not in policies:
        raise StudyError(f"unknown policy '{name}'; allowed (from {path}): {', '.join(policies)}")
    return policies[name]
