"""disk-calib's prediction for every kind of [disk.timing], on the host alone: the
analytic model's profiles keep their predictions, and a profile timed by DiskSim or
SimpleSSD gets none: the prediction says what times its disk and what its reference is,
and never prices it by the analytic formulas."""

import pytest

from reclaimstudy.config import disk_model
from reclaimstudy.config.systems import get_system

MIB = 1 << 20
# Per profile timed by an outside simulator: what its message must name (the simulator,
# facts from its [disk.timing], and the reference its measurements are held to).
SIMULATED = {
    "desktop-disksim-ibm18es-64": ["DiskSim 4.0", "IBM Ultrastar 18ES", "7200 rpm",
                                   "validated by DiskSim's authors",
                                   "its reference is DiskSim standalone",
                                   "tests/test_disksim_gem5.py"],
    "desktop-disksim-ibm18es-sata-64": ["DiskSim 4.0", "IBM Ultrastar 18ES", "7200 rpm",
                                        "derived, not validated",
                                        "4 DiskSim parameters overridden",
                                        "its reference is DiskSim standalone",
                                        "tests/test_disksim_gem5.py"],
    "desktop-sata-ssd-64": ["SimpleSSD 2.0", "Samsung SSD 850 PRO 256 GB",
                            "configs/simplessd/samsung-850-pro-256gb.cfg",
                            "its reference is SimpleSSD standalone",
                            "tests/test_simplessd_gem5.py"],
}
NOT_ANALYTIC = "the analytic prediction (reclaimstudy/config/disk_model.py) does not apply"


def says_why(text: str, profile: str) -> None:
    for fact in SIMULATED[profile] + [NOT_ANALYTIC]:
        assert fact in text, (fact, text)


# --- the analytic model's profiles: their predictions as before ---

# predicted_calibration on a 64 MiB file, 16 MiB streams, 256 swap commands of 32 MiB,
# as computed at 082c732, before simulator-timed profiles were refused.
ANALYTIC = {
    "desktop-hdd-128": {"random_4k_latency_s": 0.00571606, "sequential_mib_s": 130.07,
                        "random_4k_write_latency_s": 0.00523106,
                        "sequential_write_mib_s": 130.585, "swap_out_s_per_mib": 0.00361525},
    "desktop-ssd-128": {"random_4k_latency_s": 9.01704e-05, "sequential_mib_s": 223.034,
                        "random_4k_write_latency_s": 0.000108618,
                        "sequential_write_mib_s": 182.274, "swap_out_s_per_mib": 0.00548625},
    "mobile-lpddr": {"random_4k_latency_s": 9.1384e-05, "sequential_mib_s": 208.581,
                     "random_4k_write_latency_s": 7.6768e-05,
                     "sequential_write_mib_s": 114.409, "swap_out_s_per_mib": 0.00874061},
}


@pytest.mark.parametrize("profile", sorted(ANALYTIC))
def test_the_analytic_profiles_predictions_are_unchanged(profile):
    timing = get_system(profile).disk.timing
    assert disk_model.why_no_prediction(timing) is None
    predicted = disk_model.predicted_calibration(
        timing, 64 * MIB // 512, swap_commands=256, swap_bytes=32 * MIB,
        read_bytes=16 * MIB, write_bytes=16 * MIB)
    assert predicted == pytest.approx(ANALYTIC[profile], rel=1e-5)


# --- profiles timed by DiskSim or SimpleSSD: no prediction, said plainly ---


@pytest.mark.parametrize("profile", sorted(SIMULATED))
def test_the_prediction_refuses_a_simulated_disk_naming_its_reference(profile):
    timing = get_system(profile).disk.timing
    why = disk_model.why_no_prediction(timing)
    says_why(why, profile)
    # No entry into the formulas prices it (as flash, or with a default): each refuses.
    for ask in (lambda: disk_model.predicted_calibration(timing, 1 << 17),
                lambda: disk_model.random_access_s(timing, False, 4096, 1 << 17),
                lambda: disk_model.sequential_mb_s(timing, False),
                lambda: disk_model.writes_s(timing, 256, 32 * MIB)):
        with pytest.raises(disk_model.NoPrediction) as refused:
            ask()
        assert str(refused.value) == why
