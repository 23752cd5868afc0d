"""How a study judges its rows: the `[verdicts]` table of a study file.

    [verdicts]
    alpha = 0.05                  # the family's type-I error
    multiplicity = "holm"         # holm, bh (Benjamini-Hochberg) or none, across the rows
    equivalence_margin = 0.10     # "no effect" is a ratio within [1/1.1, 1.1] (TOST)
    looks = [3, 5, 10]            # group-sequential: pairs at each look (leave out: fixed)
    spending = "obrien-fleming"   # or pocock: how alpha is spent over the looks

Every key has the default shown except `looks` (none: a fixed number of pairs).
analysis/verdicts.py applies them; analysis/sequential.py makes the looks' boundaries.
"""

from typing import Annotated, Literal, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError

from reclaimstudy.config.tomlfile import config_error, number

Multiplicity = Literal["holm", "bh", "none"]
Spending = Literal["obrien-fleming", "pocock"]
MULTIPLICITY = get_args(Multiplicity)
SPENDING = get_args(Spending)


def _fraction(value: float) -> float:
    if not 0 < value < 1:
        raise ValueError("allowed: a number between 0 and 1 (exclusive)")
    return value


def _margin(value: float) -> float:
    if not 0 < value <= 1:
        raise ValueError("allowed: a relative margin > 0 and <= 1 (0.10: within +-10%)")
    return value


def _looks(value) -> tuple[int, ...]:
    if not isinstance(value, (list, tuple)) or not value or not all(
            isinstance(n, int) and not isinstance(n, bool) for n in value) \
            or list(value) != sorted(set(value)) or value[0] < 2:
        raise ValueError("allowed: a list of increasing whole pair counts, the first at "
                         "least 2 (e.g. [3, 5, 10])")
    return tuple(value)


class VerdictRules(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    alpha: Annotated[float, number(), AfterValidator(_fraction)] = 0.05
    multiplicity: Multiplicity = "holm"
    equivalence_margin: Annotated[float, number(), AfterValidator(_margin)] = 0.10
    looks: Annotated[tuple[int, ...], AfterValidator(_looks)] | None = None
    spending: Spending = "obrien-fleming"


def verdict_rules(table: dict | None, where: str) -> VerdictRules:
    """A [verdicts] table on its own (a study file's is checked with the file: StudyFile)."""
    try:
        return _Holder.model_validate({"verdicts": table or {}}).verdicts
    except ValidationError as error:
        raise config_error(where, error, _Holder) from None


class _Holder(BaseModel):
    verdicts: VerdictRules
