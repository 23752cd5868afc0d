"""analysis/device_costs.py: each device's measured costs from disk-calib runs, their
file-refault/swap-in ratio per repetition, the swap device's class, and the report's
section for a study of disk-calib runs (configs/studies/device-costs.toml)."""

import matplotlib.image
import pandas as pd
import pytest

from analysis import device_costs
from analysis.report import build_report
from analysis.table import build_table
from reclaimstudy.campaigns.studies import load_study
from reclaimstudy.config.systems import get_system
from reclaimstudy.results import record as rec
from tests.runfactory import GEM5_ARTEFACTS, write_run

# Per system: (random read s, swap-in s per fault) by repetition, and the guest's view.
MEASURED = {
    "desktop-hdd-64": ([(0.012, 0.004), (0.014, 0.005)], {"sda": 1}, {"/dev/sda2": ""}),
    "desktop-nvme-ssd-64": ([(0.00009, 0.00012), (0.00010, 0.00010)], {"nvme0n1": 0},
                            {"/dev/nvme0n1p2": "SSFS"}),
    "desktop-zram-64": ([(0.012, 0.00002), (0.012, 0.00003)], {"sda": 1, "zram0": 0},
                        {"/dev/zram0": "SS"}),
}


def events(random_s: float, swap_in_s: float, rotational: dict, flags: dict) -> list[dict]:
    """A disk-calib run's events as runjob and the workload write them."""
    start = {"event": "job_start", "memtotal_kib": 52004, "rotational": rotational,
             "swap_flags": flags}
    out, t = [start], 0.0
    records = {
        "random": {"mean_latency_s": random_s, "max_latency_s": 3 * random_s},
        "sequential": {"mib_per_s": 100.0},
        "random-write": {"mean_latency_s": random_s / 2},
        "sequential-write": {"mib_per_s": 80.0},
        "swap-out": {"swapped_mib": 16.0, "seconds": 0.5},
        "swap-in": {"swapped_in_mib": 16.0, "d_pgmajfault": 1000, "pages": 4096,
                    "seconds": 1000 * swap_in_s},
    }
    for phase, fields in records.items():
        out.append({"event": "phase", "name": phase, "t": t, "vmstat": {}})
        out.append({"event": "record", "kind": phase, **fields})
        t += 1.0
    out.append({"event": "phases_done", "name": "", "t": t, "vmstat": {}})
    return out


def study_folder(results):
    """The device-costs study's runs of MEASURED's systems (two repetitions each),
    written as a sweep publishes them."""
    study = load_study("device-costs")
    folder = results / study.name
    written = 0
    for _, spec in study.all_runs("gem5"):
        if spec.system.name not in MEASURED or spec.repetition > 1:
            continue
        pairs, rotational, flags = MEASURED[spec.system.name]
        random_s, swap_in_s = pairs[spec.repetition]
        record = rec.run_record(rec.run_identity(spec.identity(), GEM5_ARTEFACTS),
                                study=study.name, experiment=spec.experiment,
                                artefacts={k: {"key": v} for k, v in GEM5_ARTEFACTS.items()},
                                status="ok", reason=None, wall_seconds=60.0,
                                started_at="2026-12-06T10:00:00+0000", host={})
        write_run(folder, record, events=events(random_s, swap_in_s, rotational, flags))
        written += 1
    assert written == 2 * len(MEASURED)
    return study, folder


def test_each_devices_costs_and_ratio_per_repetition(tmp_path):
    _, folder = study_folder(tmp_path)
    costs = device_costs.cost_table(build_table(folder, "device-costs")).set_index("system")
    hdd = costs.loc["desktop-hdd-64"]
    assert hdd["random_read_us"] == pytest.approx(13000)
    assert (hdd["random_read_us_min"], hdd["random_read_us_max"]) == pytest.approx((12000, 14000))
    assert hdd["swap_in_us_per_fault"] == pytest.approx(4500)
    # the ratio is each repetition's, then their mean: (3.0 + 2.8) / 2, not 13000 / 4500
    assert hdd[device_costs.RATIO] == pytest.approx((0.012 / 0.004 + 0.014 / 0.005) / 2)
    assert hdd["sequential_read_mib_s"] == 100.0 and hdd["swap_out_ms_per_mib"] == \
        pytest.approx(0.5 / 16 * 1e3)
    assert (hdd["swap_rotational"], hdd["swap_solid_state"]) == (1.0, 0.0)
    nvme, zram = costs.loc["desktop-nvme-ssd-64"], costs.loc["desktop-zram-64"]
    assert (nvme["swap_rotational"], nvme["swap_solid_state"]) == (0.0, 1.0)
    # zram: the swap's own device decides, though the root disk rotates
    assert (zram["swap_rotational"], zram["swap_solid_state"]) == (0.0, 1.0)
    # highest ratio first: zram's swap-in is hundreds of times cheaper than the disk's read
    assert list(costs.index) == ["desktop-zram-64", "desktop-hdd-64", "desktop-nvme-ssd-64"]
    assert costs["repetitions"].tolist() == [2, 2, 2]


def test_repetitions_that_disagree_on_the_device_class_show_no_class():
    rows = []
    for repetition, flag in enumerate((1.0, 0.0)):
        base = {"backend": "gem5", "system": "s", "repetition": repetition, "workload": "disk-calib",
                "status": "ok", "index": None}
        rows += [{**base, "source": "workload", "metric": "random_4k_latency_s",
                  "phase": "random", "value": 0.01},
                 {**base, "source": "workload", "metric": "swap_in_s_per_fault",
                  "phase": "swap-in", "value": 0.01},
                 {**base, "source": "guest", "metric": "swap_rotational", "phase": None,
                  "value": flag}]
    [row] = device_costs.cost_table(pd.DataFrame(rows)).to_dict("records")
    assert row["swap_rotational"] is None and row[device_costs.RATIO] == 1.0
    assert row["swap_solid_state"] is None  # never recorded (a run from before runjob did)
    assert device_costs.cost_table(pd.DataFrame(rows).assign(workload="smoke")).empty


def test_the_report_of_a_disk_calib_study_shows_the_costs_and_their_plot(tmp_path):
    study, folder = study_folder(tmp_path)
    paths = build_report(study, tmp_path)
    text = paths["markdown"].read_text()
    section = text.split("## What each device costs the guest", 1)[1]
    lines = [line for line in section.splitlines() if line.startswith("| desktop-")]
    assert [line.split(" | ")[0] for line in lines] == \
        ["| desktop-zram-64 [gem5]", "| desktop-hdd-64 [gem5]", "| desktop-nvme-ssd-64 [gem5]"]
    # the drive from the run's identity, zram named as the swap
    assert "Hitachi Deskstar 7K1000.C" in lines[1] and "zram (lzo-rle)" in lines[0]
    assert " 1 / 0 " in lines[1] and " 0 / 1 " in lines[2]
    assert "13,000 [12,000, 14,000]" in lines[1]
    figure = folder / "report" / "plots" / "device-costs.png"
    assert "(plots/device-costs.png)" in section
    assert matplotlib.image.imread(figure).shape[0] > 100


def test_a_swap_class_other_than_the_profiles_is_shown_in_bold(tmp_path):
    """A run whose guest took its swap for another class than its profile's drive
    gives (say, an SSD run from before the drive reported non-rotating media) is marked;
    the profiles' classes come from their drive models, zram's from zram."""
    study, folder = study_folder(tmp_path)
    named = device_costs.devices({s: get_system(s).identity() for s in MEASURED})
    assert {s: d["expected"] for s, d in named.items()} == {
        "desktop-hdd-64": (1.0, 0.0), "desktop-nvme-ssd-64": (0.0, 1.0),
        "desktop-zram-64": (0.0, 1.0)}
    costs = device_costs.cost_table(build_table(folder, "device-costs"))
    assert "**" not in device_costs.markdown(costs, named)
    named["desktop-nvme-ssd-64"]["expected"] = (1.0, 0.0)
    [line] = [x for x in device_costs.markdown(costs, named).splitlines() if "nvme" in x]
    assert "**0 / 1 (profile: 1 / 0)**" in line
    for name in ("desktop-sata-ssd-64", "mobile-emmc-samsung-pro-32gb-64", "desktop-ssd-64",
                 "desktop-disksim-ibm18es-64", "ci-tiny"):
        [device] = device_costs.devices({name: get_system(name).identity()}).values()
        assert device["expected"][0] == float(get_system(name).disk.rotational), name


def test_the_command_prints_the_table(tmp_path, capsys):
    _, folder = study_folder(tmp_path)
    assert device_costs.main([str(folder)]) == 0
    out = capsys.readouterr().out
    assert out.count("| desktop-") == 3 and "Hitachi" in out
    assert device_costs.main([]) == 2
