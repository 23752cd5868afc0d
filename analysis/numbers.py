"""How the reports and `./study pairs` write a measured amount: a whole number, or any
amount from 1,000 up, whole with thousands separators (6,012 us, not 6.01e+03; a mean
of counts too, as findings quote them); a fraction below that to four significant
digits; "-" where there is none."""

import math


def amount(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "-"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:,.0f}" if value == int(value) or abs(value) >= 1e3 else f"{value:.4g}"
