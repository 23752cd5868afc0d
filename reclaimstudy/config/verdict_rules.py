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

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError

from reclaimstudy.config.tomlfile import config_error, number, one_of

MULTIPLICITY = ("holm", "bh", "none")
SPENDING = ("obrien-fleming", "pocock")


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
    multiplicity: Annotated[str, one_of(MULTIPLICITY)] = "holm"
    equivalence_margin: Annotated[float, number(), AfterValidator(_margin)] = 0.10
    looks: Annotated[tuple[int, ...], AfterValidator(_looks)] | None = None
    spending: Annotated[str, one_of(SPENDING)] = "obrien-fleming"


def verdict_rules(table: dict | None, where: str) -> VerdictRules:
    try:
        return VerdictRules(**(table or {}))
    except ValidationError as error:
        raise config_error(f"{where} [verdicts]", error, VerdictRules) from None
    except TypeError:  # [verdicts] not a table
        from reclaimstudy.errors import StudyError
        raise StudyError(f"{where}: verdicts must be a table ([verdicts])") from None
