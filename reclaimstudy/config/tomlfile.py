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


def fields_of(model) -> dict:
    """A pydantic model's (or pydantic dataclass's) fields: name -> FieldInfo."""
    return getattr(model, "__pydantic_fields__", None) or getattr(model, "model_fields", {})


def _model_at(model, loc: tuple):
    """The pydantic model class that holds the key at `loc` (for its allowed keys); list
    indexes and a table's own names (dict keys) stay in the model of their items."""
    for part in loc:
        field = fields_of(model).get(part)
        if field is None:
            continue
        inner = _models_in(field.annotation)
        if not inner:
            return model
        model = inner[0]
    return model


def _models_in(annotation) -> list:
    """The models a field's annotation holds: itself, or in an Optional, a union, a list
    or a table of them (Annotated unwrapped)."""
    if fields_of(annotation):
        return [annotation]
    if typing.get_origin(annotation) is typing.Annotated:
        return _models_in(typing.get_args(annotation)[0])
    return [m for a in typing.get_args(annotation) for m in _models_in(a)]


def _plain_field(model, loc: tuple) -> bool:
    """Whether `loc` ends at a key whose value is no table of a model (a dict value:
    a key of its own, not a section)."""
    if not loc or model is None:
        return False
    field = fields_of(_model_at(model, tuple(str(p) for p in loc[:-1]))).get(str(loc[-1]))
    return field is not None and not _models_in(field.annotation)


def _key_names(model) -> list[str]:
    """The keys a file may give for a model: its fields by their TOML name (alias)."""
    return sorted({field.alias or name for name, field in fields_of(model).items()} - NOT_KEYS)


def _literal_values(model, key: str) -> tuple:
    """The values a Literal field allows, or () when the key is no Literal field."""
    field = next((f for name, f in fields_of(model).items() if key in (name, f.alias)),
                 None) if model else None
    stack = [field.annotation] if field is not None else []
    while stack:
        annotation = stack.pop()
        if typing.get_origin(annotation) is typing.Literal:
            return typing.get_args(annotation)
        stack += typing.get_args(annotation)
    return ()


# What a value of the wrong kind should have been, by pydantic's error type.
ALLOWED_KINDS = {"string_type": "text", "bool_type": "true or false",
                 "int_type": "a whole number", "float_type": "a number",
                 "dict_type": "a table", "model_type": "a table", "dataclass_type": "a table",
                 "list_type": "a list", "tuple_type": "a list", "too_short": "a non-empty list",
                 "string_too_short": "text, not empty", "string_pattern_mismatch": "text, not blank"}


# Fields the loaders fill in themselves (from the file's name or the table's), never keys.
NOT_KEYS = {"name", "path", "directory"}


def _section(loc: tuple) -> str:
    """Where in the file: [a.b], or [[a]] #N for the Nth table of an array of tables."""
    out: list[str] = []
    for part in loc:
        if isinstance(part, int):
            table = out.pop().strip("[]") if out else ""
            out.append(f"[[{table}]] #{part + 1}")
        elif out and not out[-1].startswith("[["):
            out[-1] = out[-1][:-1] + f".{part}]"
        else:
            out.append(f"[{part}]")
    return " ".join(out)


def config_error(path: Path | str | None, error: ValidationError,
                 model=None) -> StudyError:
    """The first problem pydantic found, as a message naming the file, the [section],
    the key, the value and what is allowed."""
    errors = error.errors()
    # An unknown key first: it often explains a missing one (a misspelt key).
    unknown_kinds = ("extra_forbidden", "unexpected_keyword_argument")
    first = next((e for e in errors if e["type"] in unknown_kinds), errors[0])
    loc = tuple(first["loc"])
    kind, message = first["type"], first["msg"].removeprefix("Value error, ")
    if kind in ("missing", "missing_argument", *unknown_kinds) \
            or not isinstance(first.get("input"), dict) or _plain_field(model, loc):
        section, key = loc[:-1], (str(loc[-1]) if loc else None)
        if len(loc) > 1 and isinstance(loc[-1], int):  # an item of a list of values
            section, key = loc[:-2], f"{loc[-2]} item {loc[-1] + 1}"
    else:  # a check of a whole section (a model validator): no one key to name
        section, key = loc, None
    where = f"{path}" + (f" {_section(section)}" if section else "")
    owner = _model_at(model, tuple(str(p) for p in section)) if model else None
    if kind in ("missing", "missing_argument"):
        return StudyError(f"{where}: missing key(s) {key}")
    if kind in unknown_kinds:
        allowed = ", ".join(_key_names(owner)) if owner else "?"
        return StudyError(f"{where}: unknown key(s) {key}; allowed: {allowed}")
    if key is None:
        return StudyError(f"{where}: {message}")
    if kind == "literal_error":
        values = _literal_values(owner, key)
        message = "allowed: " + (", ".join(map(str, values)) if values
                                 else first.get("ctx", {}).get("expected", "?"))
    elif kind in ALLOWED_KINDS:
        message = f"allowed: {ALLOWED_KINDS[kind]}"
    if not message.startswith("allowed") and not message.startswith("expected"):
        message = message[0].lower() + message[1:]
    return StudyError(f"{where}: {key} = {first.get('input')!r}; {message}")
