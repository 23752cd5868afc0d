"""The disk prediction (reclaimstudy/config/disk_model.py): the arithmetic the calibration
test holds gem5's measurements against, checked against its own definitions."""

import numpy as np
import pytest

from reclaimstudy.config import disk_model
from reclaimstudy.config.systems import get_system

HDD = get_system("desktop-hdd-128").disk.timing
SSD = get_system("desktop-ssd-128").disk.timing


def test_the_seek_curve_passes_through_the_datasheet_figures():
    assert disk_model.seek_s(HDD, 0.0) == pytest.approx(HDD.seek_track_to_track_ms / 1e3)
    assert disk_model.seek_s(HDD, 1.0) == pytest.approx(HDD.seek_full_stroke_ms / 1e3)
    # The average over uniformly random start and end positions is the datasheet's
    # average seek (sampled here, not integrated as the model does).
    rng = np.random.default_rng(7)
    start, end = rng.random(400_000), rng.random(400_000)
    sampled = np.mean([disk_model.seek_s(HDD, x) for x in np.abs(start - end)[:50_000]])
    assert sampled == pytest.approx(HDD.seek_average_ms / 1e3, rel=0.01)


def test_the_hitachi_curve_is_close_to_ruemmler_and_wilkes_square_root():
    assert disk_model.seek_exponent(HDD) == pytest.approx(0.5, abs=0.02)


def test_seeks_grow_with_distance_and_stay_within_the_stroke():
    distances = np.linspace(0, 1, 50)
    seeks = [disk_model.seek_s(HDD, x) for x in distances]
    assert all(b > a for a, b in zip(seeks, seeks[1:]))
    assert disk_model.seek_s(HDD, 3.0) == disk_model.seek_s(HDD, 1.0)


def test_a_random_read_pays_overhead_seek_half_a_turn_and_transfer():
    full = HDD.stroke_sectors
    whole_drive = disk_model.random_access_s(HDD, False, 4096, full, 0)
    expected = (HDD.read_overhead_ms + HDD.seek_average_ms + 0.5 * 60e3 / HDD.rpm) / 1e3 \
        + 4096 / (HDD.media_mb_s * 1e6)
    assert whole_drive == pytest.approx(expected, rel=0.01)
    # Confined to 64 MiB at the start of a 1 TB drive the seeks are short, not free.
    region = disk_model.random_access_s(HDD, False, 4096, (64 << 20) // 512, 0)
    assert 0.5e-3 + 60 / HDD.rpm / 2 < region < whole_drive
    # Within one track there is nothing to seek.
    assert disk_model.mean_seek_s(HDD, disk_model.track_sectors(HDD), 0) == 0.0


def test_the_stroke_defaults_to_the_image():
    image = HDD.model_copy(update={"stroke_sectors": 0})
    assert disk_model.mean_seek_s(image, 1 << 20, 1 << 20) == pytest.approx(
        HDD.seek_average_ms / 1e3, rel=0.02)


def test_flash_pays_latency_per_command_and_streams_at_its_rate():
    assert disk_model.random_access_s(SSD, False, 4096) == pytest.approx(
        75e-6 + 4096 / 270e6)
    assert disk_model.random_access_s(SSD, True, 4096) == pytest.approx(90e-6 + 4096 / 220e6)
    assert disk_model.sequential_mb_s(SSD, False) == pytest.approx(
        131072 / (75e-6 + 131072 / 270e6) / 1e6)
    assert disk_model.sequential_mb_s(HDD, False) == HDD.media_mb_s


def test_a_write_back_cache_takes_writes_at_the_link_rate_until_it_is_full():
    cached, through = HDD, HDD.model_copy(update={"write_cache_mib": 0})
    assert disk_model.writes_s(through, 256, 32 << 20) == pytest.approx(
        256 * 15e-6 + (32 << 20) / 143e6)
    # 32 MiB fits a 32 MiB cache that drains while it fills: the link's rate.
    assert disk_model.writes_s(cached, 256, 32 << 20) == pytest.approx(
        256 * 15e-6 + (32 << 20) / 300e6)
    # Far beyond the cache, the media's rate is what is left.
    big = 4 << 30
    assert disk_model.writes_s(cached, 0, big) == pytest.approx(big / 143e6, rel=0.02)
    assert disk_model.writes_s(cached, 0, big) > disk_model.writes_s(cached, 0, big // 2) * 1.9


def test_an_overlapped_phase_is_judged_against_its_range():
    """Swap-out on the hard disk (2026-11-26): the device 3.62 ms/MiB, reclaim's own path
    1.57; measured 4.31 lies between all-overlapped (3.62) and none (5.19)."""
    from analysis.disk_calibration import range_error
    assert range_error(4.31e-3, 3.62e-3, 5.19e-3) == 0
    assert range_error(6.0e-3, 3.62e-3, 5.19e-3) == pytest.approx(6.0 / 5.19 - 1)
    assert range_error(3.0e-3, 3.62e-3, 5.19e-3) == pytest.approx(3.0 / 3.62 - 1)
    # a point prediction is a range of one value; a rate's bounds may come reversed
    assert range_error(110.0, 100.0, 100.0) == pytest.approx(0.1)
    assert range_error(90.0, 120.0, 80.0) == 0
