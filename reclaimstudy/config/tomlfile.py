"""Reading the project's TOML data files with errors that name the file."""

import tomllib
import typing
from pathlib import Path

from pydantic import BeforeValidator, ValidationError

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


# Validators for pydantic models of these files: each names what is allowed.

def one_of(allowed) -> BeforeValidator:
    def check(value):
        if value not in allowed:
            raise ValueError(f"allowed: {', '.join(allowed)}")
        return value
    return BeforeValidator(check)


def whole_number(low: int, high: int) -> BeforeValidator:
    def check(value):
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise ValueError(f"allowed: integers {low}..{high}")
        return value
    return BeforeValidator(check)


def number() -> BeforeValidator:
    """A float field that takes TOML's whole numbers too, never a boolean or text."""
    def check(value):
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise ValueError("allowed: a number")
        return float(value)
    return BeforeValidator(check)


def _model_at(model, loc: tuple):
    """The pydantic model class that holds the key at `loc` (for its allowed keys)."""
    for part in loc:
        field = getattr(model, "model_fields", {}).get(part)
        if field is None:
            return model
        annotation = field.annotation
        inner = [a for a in typing.get_args(annotation) if hasattr(a, "model_fields")]
        candidate = inner[0] if inner else annotation
        if not hasattr(candidate, "model_fields"):
            return model
        model = candidate
    return model


# Fields the loaders fill in themselves (from the file's name or the table's), never keys.
NOT_KEYS = {"name", "path"}


def config_error(path: Path, error: ValidationError, model=None) -> StudyError:
    """The first problem pydantic found, as a message naming the file, the [section],
    the key, the value and what is allowed."""
    errors = error.errors()
    # An unknown key first: it often explains a missing one (a misspelt key).
    first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = tuple(str(p) for p in first["loc"])
    kind, message = first["type"], first["msg"].removeprefix("Value error, ")
    if kind in ("missing", "extra_forbidden") or not isinstance(first.get("input"), dict):
        section, key = loc[:-1], (loc[-1] if loc else None)
    else:  # a check of a whole section (a model validator): no one key to name
        section, key = loc, None
    where = f"{path}" + (f" [{'.'.join(section)}]" if section else "")
    if kind == "missing":
        return StudyError(f"{where}: missing key(s) {key}")
    if kind == "extra_forbidden":
        owner = _model_at(model, section) if model else None
        allowed = ", ".join(sorted(set(owner.model_fields) - NOT_KEYS)) if owner else "?"
        return StudyError(f"{where}: unknown key(s) {key}; allowed: {allowed}")
    if key is None:
        return StudyError(f"{where}: {message}")
    if not message.startswith("allowed") and not message.startswith("expected"):
        message = message[0].lower() + message[1:]
    return StudyError(f"{where}: {key} = {first.get('input')!r}; {message}")
