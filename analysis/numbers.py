"""How the reports write a measured amount: significant digits below 10**(digits-1), whole
with thousands separators from there up (6,010 us, not 6.01e+03; 276,850 ms, not
2.768e+05), so a reader compares magnitudes at a glance."""

import math


def amount(value, digits: int = 3) -> str:
    """`value` as text; "-" where there is none (None or NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if abs(value) >= 10 ** (digits - 1):
        return f"{value:,.0f}"
    return f"{value:.{digits}g}"
