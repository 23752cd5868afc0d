"""Reading the project's TOML data files with errors that name the file."""

import tomllib
from pathlib import Path

from reclaimstudy.errors import StudyError


def load(path: Path) -> dict:
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise StudyError(f"{path}: no such file") from None
    except tomllib.TOMLDecodeError as error:
        raise StudyError(f"{path}: not valid TOML: {error}") from None


def check_keys(where: str, table: dict, allowed: set[str], required: set[str] = frozenset()):
    """Reject unknown or missing keys, naming them and what is allowed."""
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise StudyError(f"{where}: unknown key(s) {', '.join(unknown)}; "
                         f"allowed: {', '.join(sorted(allowed))}")
    missing = sorted(required - set(table))
    if missing:
        raise StudyError(f"{where}: missing key(s) {', '.join(missing)}")
