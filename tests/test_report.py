"""The report, built from recorded runs, and opened in headless Chromium."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import matplotlib.image
import pandas as pd
import pytest

from analysis.records import read_events
from analysis.report import build_report, storage_words
from analysis.table import build_table, guest_rows
from reclaimstudy.campaigns.studies import load_study
from reclaimstudy.errors import StudyError
from reclaimstudy.results.record import PublishedRun
from tests.runfactory import changed, make_record, write_run

RUNS = Path(__file__).parent / "fixtures" / "runs"
CHROMIUM = shutil.which("chromium")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    results = tmp_path_factory.mktemp("results")
    shutil.copytree(RUNS / "smoke", results / "smoke")
    return build_report(load_study("smoke"), results)


def test_report_has_the_seed_table_experiments_and_inputs(report):
    markdown = report["markdown"].read_text()
    assert "## Seed reproduction" in markdown
    assert re.search(r"\| 002 \| lazyfree \| ebizzy .* \| records_per_s \[arena-t1\]", markdown)
    assert "QEMU (functional only, no timing model)" in markdown
    for experiment in ("smoke", "thrash", "lazyfree"):
        assert f"### {experiment} on ci-tiny [qemu]" in markdown
    assert "## Inputs behind every number" in markdown and "kernel `" in markdown
    for plot in re.findall(r"\]\((plots/[^)]+\.png)\)", markdown):
        assert (report["markdown"].parent / plot).is_file()


def test_each_experiment_says_what_times_its_drive_and_where_root_and_swap_live(report):
    markdown = report["markdown"].read_text()
    # the fixtures' ci-tiny: gem5's fixed delay, swap on a disk of its own
    assert markdown.count(f"Storage: {storage_words('ci-tiny')}.") == 3
    assert "no drive model" in storage_words("ci-tiny")
    assert "two disks" in storage_words("ci-tiny")
    # one rotating drive holding both: one spindle; the drive's validation in its name
    validated = storage_words("desktop-disksim-ibm18es-64")
    assert validated.startswith("DiskSim 4.0, IBM Ultrastar 18ES") and "validated model" in validated
    assert "one spindle, root and swap on one drive" in validated
    assert "derived, not validated" in storage_words("desktop-disksim-ibm18es-sata-64")
    # flash shares a drive without a spindle; NVMe and zram say so
    assert "spindle" not in storage_words("desktop-sata-ssd-64")
    assert "queue depth 1" in storage_words("desktop-sata-ssd-64")
    assert "NVMe controller" in storage_words("desktop-nvme-950-pro-64")
    assert "swap on zram" in storage_words("desktop-zram-64")
    assert storage_words("no-such-profile") is None


def test_every_run_behind_an_experiment_is_one_link_from_the_report(report):
    markdown = report["markdown"].read_text()
    links = re.findall(r"\[r(\d+)\]\(\.\./([^)]+)/run\.json\)", markdown)
    assert len(links) == 18  # every run of the smoke fixtures, once
    out = report["markdown"].parent
    for repetition, run_id in links:
        record = json.loads((out.parent / run_id / "run.json").read_text())
        assert record["identity"]["repetition"] == int(repetition)
    assert 'href="../' in report["html"].read_text()


def full_table(markdown: str) -> str:
    """The report from its full reproduction table on (the summary's rows come first)."""
    return markdown.split('<div id="seed-reproduction"></div>', 1)[1]


def test_seed_table_puts_mglru_beside_the_seeds_on_policy(report):
    import pandas as pd
    table = pd.read_parquet(report["table"][1])
    late = table[(table["workload"] == "thrash") & (table["metric"] == "late_rounds_mean_s")]
    means = late.groupby("policy")["value"].mean()
    row = next(line for line in full_table(report["markdown"].read_text()).splitlines()
               if line.startswith("| 001 |"))
    cells = [c.strip() for c in row.split("|")]
    mglru = cells[cells.index("QEMU (functional only, no timing model)") - 1]
    # its ratio is to the claim's "with" policy, the control's old-refault-distance
    with_policy = means['old-refault-distance']
    assert mglru == f"{means['mglru']:.4g} ({means['mglru'] / with_policy:.4g})"
    # lazyfree ran no MGLRU in the smoke study: the cell says so
    row = next(line for line in full_table(report["markdown"].read_text()).splitlines()
               if line.startswith("| 002 |"))
    assert "| - (-) |" in row


def test_a_seeds_caveat_is_printed_under_the_table_only_when_it_has_a_row(report):
    from analysis.seeds import load_caveats
    caveats = load_caveats()
    markdown = report["markdown"].read_text()
    assert f"- **001**: {caveats['001']}" in markdown  # thrash ran in the smoke fixtures
    html = report["html"].read_text()
    assert 'id="seed-caveats"' in html and "<strong>001</strong>" in html
    for seed in set(caveats) - {"001", "002"}:
        assert f"- **{seed}**" not in markdown


def test_a_caveat_for_an_unknown_seed_is_refused(tmp_path):
    from analysis.seeds import load_caveats
    from reclaimstudy.paths import CONFIGS
    path = tmp_path / "seeds.toml"
    path.write_text((CONFIGS / "seeds.toml").read_text() + '"999" = "no such seed"\n')
    with pytest.raises(StudyError, match="names seed '999', which has no \\[\\[claim\\]\\]; allowed: 000a"):
        load_caveats(path)


def test_seed_000s_controls_are_claims_of_their_own_and_a_bad_flag_is_refused(tmp_path):
    from analysis.seeds import load_claims
    from reclaimstudy.paths import CONFIGS
    controls = [(c.seed, c.metric, c.without_policy) for c in load_claims() if c.control]
    assert controls == [("000a", "total_s", "exec-protect-all-off"),
                        ("000b", "interactive_majflt", "exec-protect-all-off")]
    path = tmp_path / "seeds.toml"
    path.write_text((CONFIGS / "seeds.toml").read_text().replace("control = true",
                                                                 'control = "yes"', 1))
    with pytest.raises(StudyError, match="control = 'yes'; allowed: true or false"):
        load_claims(path)


def test_the_reproduction_plot_places_each_row_and_colours_it_by_verdict():
    import pandas as pd

    from analysis.reproduction_plot import reproduction_figure

    def row(seed, ratio, low, high, verdict, seed_ratio):
        return {"seed": seed, "experiment": f"e{seed}", "metric": "m", "phase": "",
                "seed_ratio": seed_ratio, "paired_ratio": ratio, "interval_low": low,
                "interval_high": high, "verdict": verdict}
    seeds = pd.DataFrame([row("002", 1.47, 1.46, 1.48, "reproduced", 1.99),
                          row("004", 0.93, 0.77, 1.04, "inconclusive (n=5)", 0.47),
                          row("001", float("nan"), float("nan"), float("nan"),
                              "inconclusive (n=1)", 0.5)])
    ax = reproduction_figure(seeds).axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["001 e001: m", "004 e004: m", "002 e002: m"]  # the table's order, top down
    seed_marks = [(line.get_xdata()[0], line.get_ydata()[0]) for line in ax.lines
                  if line.get_marker() == "D"]
    assert sorted(seed_marks) == [(0.47, 1), (0.5, 0), (1.99, 2)]
    assert len(ax.collections) == 2  # one interval per row with a paired ratio
    texts = {t.get_text(): t.get_color() for t in ax.texts}
    # each interval labelled with its verdict's word (the table has the whole verdict)
    assert texts == {"reproduced": "tab:green", "inconclusive": "tab:grey"}
    assert ax.get_xscale() == "log"
    assert reproduction_figure(seeds.iloc[2:].assign(seed_ratio=float("nan"))) is None


def test_the_reproduction_plot_of_eighteen_rows_fits_a_first_screen_with_its_verdicts_aside():
    import matplotlib.pyplot as plt
    import pandas as pd

    from analysis.reproduction_plot import reproduction_figure
    seeds = pd.DataFrame([{"seed": "003", "experiment": f"e{i}", "metric": "m", "phase": "",
                           "seed_ratio": 0.9, "paired_ratio": 0.8, "interval_low": 0.7,
                           "interval_high": 0.9, "verdict": "reproduced"} for i in range(18)])
    figure = reproduction_figure(seeds)
    assert figure.get_size_inches()[1] * 110 < 600  # pixels at the report's 110 dpi
    ax = figure.axes[0]
    # each verdict's word in the right margin, level with its row, not over the row above
    assert sorted(t.xy[1] for t in ax.texts) == list(range(18))
    assert all(t.xy[0] > 1 and t.xycoords == ("axes fraction", "data") for t in ax.texts)
    plt.close(figure)


def test_the_reproduction_plot_marks_no_effect_where_the_seed_expects_none():
    import pandas as pd

    from analysis.reproduction_plot import reproduction_figure
    # seed 000b at an idle time below I: the seed's 3/50 does not apply, 1 does
    seeds = pd.DataFrame([{"seed": "000b", "experiment": "file-server-T0.01",
                           "metric": "interactive_majflt", "phase": "stream", "control": True,
                           "policies": ["baseline", "exec-protect-all-off"],
                           "seed_ratio": 0.06, "expected_ratio": 1.0, "paired_ratio": 0.9,
                           "interval_low": 0.7, "interval_high": 1.2,
                           "verdict": "equivalent, as expected"}])
    ax = reproduction_figure(seeds).axes[0]
    [label] = [t.get_text() for t in ax.get_yticklabels()]
    assert label == ("000b file-server-T0.01: interactive_majflt [stream] "
                     "(control: exec-protect-all-off) (seed: none here)")
    [mark] = [line for line in ax.lines if line.get_marker() == "D"]
    assert mark.get_xdata()[0] == 1.0 and mark.get_markerfacecolor() == "none"
    assert {t.get_text(): t.get_color() for t in ax.texts} == {
        "equivalent": "tab:green"}


def _minor_labels(figure):
    figure.canvas.draw()
    return [t.get_text() for t in figure.axes[0].xaxis.get_minorticklabels() if t.get_text()]


def test_the_reproduction_plot_labels_minor_ticks_only_on_a_narrow_axis():
    import pandas as pd

    from analysis.reproduction_plot import reproduction_figure

    def seeds(seed_ratio):
        return pd.DataFrame([{"seed": "001", "experiment": "e", "metric": "m", "phase": "",
                              "seed_ratio": seed_ratio, "paired_ratio": 0.83,
                              "interval_low": 0.57, "interval_high": 1.16,
                              "verdict": "inconclusive (n=5)"}])
    assert "0.6" in _minor_labels(reproduction_figure(seeds(0.9)))
    assert _minor_labels(reproduction_figure(seeds(0.0003))) == []  # the seed's 0.75 ms / 2.45 s


def test_the_report_opens_with_the_summary_plot_and_its_compact_verdict_table(report):
    markdown = report["markdown"].read_text()
    summary = markdown.split("## Summary", 1)[1].split("\n## ", 1)[0]
    title = markdown.split("## Summary", 1)[0]
    assert title.startswith("# Study `smoke`: ") and "Generated" not in title  # nothing before it
    # the plot first, then the table: seed | experiment | metric | seed's ratio | ours | verdict | runs
    assert summary.index("](plots/reproduction.png)") < summary.index("| seed | experiment |")
    assert (report["markdown"].parent / "plots" / "reproduction.png").is_file()
    assert ("| seed | experiment | metric | seed's ratio | ours [95% interval] | "
            "verdict (Holm-adjusted p) | runs |") in summary
    rows = [line for line in summary.splitlines() if re.match(r"\| 00\d \|", line)]
    # thrash's 001, lazyfree's 002 at one and two threads, smoke's
    assert len(rows) == 4 and all(len(line.split("|")) == 9 for line in rows)
    ebizzy = next(line for line in rows if line.startswith("| 002 |"))
    assert re.fullmatch(r"\| 002 \| \[lazyfree\]\(#exp-lazyfree-ci-tiny-qemu\) \| "
                        r"records_per_s \[arena-t1\] \| 1\.992 \| [0-9.]+ \[[0-9.]+, [0-9.]+\] \| "
                        r"\*\*inconclusive\*\* \(p [0-9.]+\) \| \[4\]\(#exp-lazyfree-ci-tiny-qemu\) \|",
                        ebizzy), ebizzy
    # the smoke study's thrash ran both of seed 001's pairs: each row names its pair
    thrash = [line.split(" | ")[2] for line in rows if line.startswith("| 001 |")]
    assert thrash == ["late_rounds_mean_s, old-refault-distance / old-refault-distance-scan-anon-off",
                      "late_rounds_mean_s, baseline / refault-scan-anon-off"]
    # the long texts stay in the full table, after the experiments
    assert "ebizzy -S 10" not in summary and "ebizzy -S 10" in full_table(markdown)
    assert markdown.index("## Summary") < markdown.index("## Experiments") < \
        markdown.index("## Seed reproduction") < markdown.index("## Appendix: provenance")


def test_the_summary_cells_shorten_a_row_and_keep_its_numbers():
    from analysis.report import summary_cells
    row = {"metric": "interactive_majflt", "phase": "stream", "control": True,
           "policies": ["baseline", "exec-protect-all-off"], "expects_none": True,
           "seed_ratio": 0.06, "paired_ratio": 0.9613, "interval_low": 0.902,
           "interval_high": 1.024, "test": "equivalence (TOST, ±10%)", "adjusted_p": 0.1745,
           "verdict": "inconclusive (n=10, equivalence p=0.17 at ±10%)"}
    assert summary_cells(row) == {
        "metric_cell": "interactive_majflt [stream], control: exec-protect-all-off",
        "seed_cell": "none here (0.06 in its window)", "ours_cell": "0.9613 [0.902, 1.024]",
        "verdict_cell": "**inconclusive** (TOST p 0.1745)"}
    untestable = row | {"control": False, "expects_none": False, "phase": "", "test": "out of regime",
                        "adjusted_p": float("nan"),
                        "verdict": "untestable here: every run out of the seed's regime (5 of 5 short)"}
    cells = summary_cells(untestable)
    assert cells["metric_cell"] == "interactive_majflt" and cells["seed_cell"] == "0.06"
    assert cells["verdict_cell"] == "**untestable** (out of regime)"
    decided = row | {"expects_none": False, "test": "paired t-test", "adjusted_p": 0.0004,
                     "verdict": "reproduced (decided at 3 pairs)"}
    assert summary_cells(decided)["verdict_cell"] == "**reproduced** (p 0.0004, decided at 3 pairs)"
    lone = row | {"paired_ratio": float("nan"), "test": "none", "adjusted_p": float("nan"),
                  "verdict": "inconclusive (n=1)"}
    assert summary_cells(lone)["ours_cell"] == "-"
    assert summary_cells(lone)["verdict_cell"] == "**inconclusive** (no test)"


def test_html_references_its_plots_as_files_beside_it(report):
    html = report["html"].read_text()
    assert "<script" not in html and "data:image" not in html and "base64" not in html
    images = re.findall(r'<img src="([^"]+)"', html)
    assert len(images) >= 6 and all(src.startswith("plots/") for src in images)
    assert images[0] == "plots/reproduction.png"  # the summary's, first
    for src in images:
        pixels = matplotlib.image.imread(report["html"].parent / src)
        assert pixels.shape[0] > 100 and pixels.shape[1] > 100


def test_table_exports_hold_every_run(report):
    csv, parquet = report["table"]
    import pandas as pd
    table = pd.read_parquet(parquet)
    assert table["run_id"].nunique() == 18
    assert set(table["source"]) == {"workload", "vmstat", "guest"}
    assert len(pd.read_csv(csv)) == len(table)


def test_each_phase_records_the_swap_cache_left_at_its_end(report):
    import pandas as pd
    table = pd.read_parquet(report["table"][1])
    [run_dir] = (RUNS / "smoke").glob("thrash-baseline-*r0*")
    ends = [e["vmstat"]["nr_swapcached"] for e in read_events(run_dir)
            if e.get("event") in ("phase", "phases_done")]
    rows = table[(table["run_id"] == run_dir.name) & (table["metric"] == "swapcache_end")]
    assert dict(zip(rows["phase"], rows["value"])) == {"fill": ends[1], "access": ends[2]}
    assert ends[1] > 0  # the fixture's fill did leave pages in the swap cache


def test_each_phase_counts_the_pages_moved_each_way_between_the_lists(report):
    import pandas as pd
    table = pd.read_parquet(report["table"][1])
    [run_dir] = (RUNS / "smoke").glob("thrash-baseline-*r0*")
    marks = [e["vmstat"] for e in read_events(run_dir)
             if e.get("event") in ("phase", "phases_done")]
    for counter in ("pgactivate", "pgdeactivate"):  # the table names them as vmstat does
        rows = table[(table["run_id"] == run_dir.name) & (table["metric"] == counter)]
        assert dict(zip(rows["phase"], rows["value"])) == {
            "fill": marks[1][counter] - marks[0][counter],
            "access": marks[2][counter] - marks[1][counter]}
    assert marks[2]["pgdeactivate"] > marks[1]["pgdeactivate"]  # the fixture's access deactivates


def test_each_phase_splits_reclaim_by_kind_and_counts_the_anonymous_memory_at_its_start(report):
    import pandas as pd
    table = pd.read_parquet(report["table"][1])
    [run_dir] = (RUNS / "smoke").glob("thrash-baseline-*r0*")
    marks = [e["vmstat"] for e in read_events(run_dir)
             if e.get("event") in ("phase", "phases_done")]
    rows = table[table["run_id"] == run_dir.name]
    for counter in ("pgsteal_anon", "pgsteal_file"):
        got = rows[rows["metric"] == counter]
        assert dict(zip(got["phase"], got["value"])) == {
            "fill": marks[1][counter] - marks[0][counter],
            "access": marks[2][counter] - marks[1][counter]}
    start = rows[rows["metric"] == "anon_start"]
    assert dict(zip(start["phase"], start["value"])) == {
        phase: mark["nr_inactive_anon"] + mark["nr_active_anon"]
        for phase, mark in zip(("fill", "access"), marks)}
    # the fixture's fill swaps programs' memory out, and the two kinds add up to the whole
    fill = rows[rows["phase"] == "fill"].set_index("metric")["value"]
    assert fill["pgsteal_anon"] > 0
    assert fill["pgsteal_anon"] + fill["pgsteal_file"] == fill["pgsteal_kswapd"] + fill["pgsteal_direct"]


def test_the_guest_rows_say_what_the_repetitions_perturbation_did():
    start = {"event": "job_start", "memtotal_kib": 52004}
    did = {"event": "record", "kind": "perturb", "seed": 5, "delay_ms": 12.5,
           "file_kib": 772, "anon_kib": 240}
    rows = {r["metric"]: (r["source"], r["value"]) for r in guest_rows([start, did])}
    assert rows == {"memtotal_mib": ("guest", 52004 / 1024), "perturb_delay_ms": ("guest", 12.5),
                    "perturb_file_kib": ("guest", 772.0), "perturb_anon_kib": ("guest", 240.0)}
    # seed 0 perturbs nothing, and a run from before the perturbation has no record: no rows
    nothing = {"event": "record", "kind": "perturb", "seed": 0}
    for events in ([start, nothing], [start]):
        assert [r["metric"] for r in guest_rows(events)] == ["memtotal_mib"]


def test_the_guest_rows_say_what_the_swap_device_is_to_the_guest():
    """From job_start's disks and swap flags (as runjob writes them): a rotating disk's
    partition, an NVMe namespace's, zram; a swap area on no listed disk is an error."""
    def swap_class(rotational, flags):
        start = {"event": "job_start", "memtotal_kib": 52004, "rotational": rotational,
                 "swap_flags": flags}
        return {r["metric"]: r["value"] for r in guest_rows([start])
                if r["metric"].startswith("swap_")}

    assert swap_class({"sda": 1}, {"/dev/sda2": ""}) == \
        {"swap_rotational": 1.0, "swap_solid_state": 0.0}
    assert swap_class({"nvme0n1": 0}, {"/dev/nvme0n1p2": "SSFS"}) == \
        {"swap_rotational": 0.0, "swap_solid_state": 1.0}
    # zram beside a rotating root disk: the swap's own disk decides
    assert swap_class({"sda": 1, "zram0": 0}, {"/dev/zram0": "SSFS"}) == \
        {"swap_rotational": 0.0, "swap_solid_state": 1.0}
    # two areas, one on each: rotating, and not all solid state
    assert swap_class({"sda": 1, "zram0": 0}, {"/dev/sda2": "", "/dev/zram0": "SS"}) == \
        {"swap_rotational": 1.0, "swap_solid_state": 0.0}
    # a run from before runjob recorded them, or with no swap: no rows
    assert swap_class({"sda": 1}, {}) == {} and swap_class({}, {}) == {}
    with pytest.raises(StudyError, match="lies on none of the disks"):
        swap_class({"sda": 1}, {"/dev/vdb1": ""})


def test_runs_the_study_no_longer_asks_for_are_set_aside(tmp_path):
    study = tmp_path / "smoke"
    shutil.copytree(RUNS / "smoke", study)
    points = load_study("smoke").points()
    assert build_table(study, "smoke", points).attrs["outdated"] == 0
    # one thrash run made with other parameters than configs/studies/smoke.toml names now
    [path] = [p for p in study.glob("thrash-baseline-*r0*/run.json")]
    record = json.loads(path.read_text())
    record = changed(record, ("workload", "arguments", "rounds"),
                     record["identity"]["workload"]["arguments"]["rounds"] + 1)
    path.write_text(json.dumps(record))
    table = build_table(study, "smoke", points)
    assert table.attrs["outdated"] == 1 and table["run_id"].nunique() == 17
    assert record["run_id"] not in set(table["run_id"])
    assert build_table(study, "smoke")["run_id"].nunique() == 18  # without points: all
    report = build_report(load_study("smoke"), tmp_path)
    assert "\n\n1 run made with parameters, policies or systems that the study file no " \
           "longer names was set aside" in report["markdown"].read_text()  # a paragraph


def test_a_run_from_another_study_is_refused(tmp_path):
    shutil.copytree(RUNS / "smoke", tmp_path / "seeds")
    with pytest.raises(StudyError, match="belongs to study 'smoke', not 'seeds'"):
        build_table(tmp_path / "seeds", "seeds")


def test_a_half_written_run_is_never_read(tmp_path):
    shutil.copytree(RUNS / "smoke", tmp_path / "smoke")
    victim = next((tmp_path / "smoke").glob("thrash-*"))
    (victim / "run.json").unlink()  # as if the run died before publishing
    table = build_table(tmp_path / "smoke", "smoke")
    assert victim.name not in set(table["run_id"]) and table["run_id"].nunique() == 17


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (./study installs it)")
def test_report_renders_in_headless_chromium_with_its_plots_loaded(report, tmp_path):
    # A wrapper page loads the report in an iframe and writes, into its own DOM, how
    # many of the report's images decoded (naturalWidth > 0).
    wrapper = tmp_path / "check.html"
    wrapper.write_text(f"""<html><body><div id="result">pending</div>
<iframe id="r" src="{report['html'].as_uri()}" width="1200" height="900"></iframe>
<script>
document.getElementById('r').onload = function () {{
  var doc = this.contentDocument, imgs = doc.images, ok = 0;
  for (var i = 0; i < imgs.length; i++) if (imgs[i].complete && imgs[i].naturalWidth > 0) ok++;
  document.getElementById('result').textContent = 'images ' + ok + '/' + imgs.length +
    ' tables ' + doc.querySelectorAll('table').length +
    ' seedrows ' + doc.querySelector('#seed-reproduction ~ table').querySelectorAll('tr').length;
}};
</script></body></html>""")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}", "--allow-file-access-from-files",
             "--virtual-time-budget=10000"]
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", wrapper.as_uri()], capture_output=True,
                         text=True, timeout=120).stdout
    match = re.search(r"images (\d+)/(\d+) tables (\d+) seedrows (\d+)", dom)
    assert match, dom[:2000]
    loaded, total, tables, seed_rows = map(int, match.groups())
    assert total >= 6 and loaded == total
    assert tables >= 2 and seed_rows >= 3  # seed table (header + 2 claims) and costs
    shot = tmp_path / "report.png"
    subprocess.run([CHROMIUM, *flags, f"--screenshot={shot}", "--window-size=1200,1600",
                    report["html"].as_uri()], capture_output=True, timeout=120)
    pixels = matplotlib.image.imread(shot)
    assert pixels.std() > 0.05  # not a blank page


FIRST_SCREEN = (1366, 768)
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--allow-file-access-from-files", "--virtual-time-budget=10000"]


def first_screen(html: Path, tmp_path: Path) -> tuple[dict, Path]:
    """A report's first screen in a 1366x768 window: where its summary plot and table sit
    (the DOM of the report loaded in a frame of exactly that size, which writes what it
    measured into the wrapper page's own DOM), and a screenshot of a window that size."""
    width, height = FIRST_SCREEN
    wrapper = tmp_path / "first-screen.html"
    wrapper.write_text(f"""<html><body style="margin:0"><div id="result">pending</div>
<iframe id="r" src="{html.as_uri()}" width="{width}" height="{height}" style="border:0"></iframe>
<script>
document.getElementById('r').onload = function () {{
  var doc = this.contentDocument, win = this.contentWindow;
  var plot = doc.querySelector('img[src$="/reproduction.png"]');
  var table = doc.querySelector('#summary ~ table');
  var box = function (e) {{ var r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }};
  document.getElementById('result').textContent = 'FIRST-SCREEN ' + JSON.stringify({{
    viewport: [win.innerWidth, win.innerHeight], page_width: doc.documentElement.scrollWidth,
    plot: box(plot), plot_loaded: plot.complete && plot.naturalWidth > 0,
    plot_natural: [plot.naturalWidth, plot.naturalHeight],
    table: box(table), table_widths: [table.scrollWidth, table.clientWidth],
    columns: table.querySelector('tr').children.length}});
}};
</script></body></html>""")
    flags = [*CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", wrapper.as_uri()], capture_output=True,
                         text=True, timeout=120).stdout
    match = re.search(r"FIRST-SCREEN (\{.*?\})</div>", dom)
    assert match, dom[:2000]
    shot = tmp_path / "first-screen.png"
    subprocess.run([CHROMIUM, *flags, f"--screenshot={shot}", f"--window-size={width},{height}",
                    html.as_uri()], capture_output=True, timeout=120)
    return json.loads(match.group(1)), shot


def assert_summary_on_the_first_screen(screen: dict, shot: Path):
    width, height = FIRST_SCREEN
    assert screen["viewport"] == [width, height]
    left, top, right, bottom = screen["plot"]
    assert screen["plot_loaded"] and 0 <= top < bottom <= height, screen  # all of it, unscrolled
    # ... and not shrunk to fit (the page's CSS caps its height at the window's): its 8-pt
    # labels, 12 pixels at the plot's 110 dpi, stay at least 10 pixels high
    natural_width, natural_height = screen["plot_natural"]
    assert (bottom - top) / natural_height >= 0.85 and (right - left) / natural_width >= 0.85, screen
    assert screen["page_width"] <= width, screen  # the page never scrolls sideways
    assert screen["columns"] == 7 and screen["table"][2] <= width, screen
    scroll, client = screen["table_widths"]
    assert scroll <= client, screen  # the summary table needs no scrolling of its own
    pixels = matplotlib.image.imread(shot)
    assert pixels.shape[:2] == (height, width)
    # the screenshot shows the plot where the DOM puts it: not a blank or half-loaded page
    plot = pixels[int(top):int(bottom), int(left):int(right), :3]
    assert plot.std() > 0.05 and (plot < 0.5).any(axis=2).mean() > 0.005


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (./study installs it)")
def test_the_reports_first_screen_at_1366x768_holds_the_summary_plot_and_table(report, tmp_path):
    screen, shot = first_screen(report["html"], tmp_path)
    assert_summary_on_the_first_screen(screen, shot)
    assert screen["table"][1] < FIRST_SCREEN[1]  # the small fixture's table starts on it too


PUBLISHED_TABLES = sorted((Path(__file__).resolve().parent.parent / "results" / "published")
                          .glob("*/report/table.parquet"))


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (./study installs it)")
@pytest.mark.parametrize("table", PUBLISHED_TABLES, ids=[t.parent.parent.name for t in PUBLISHED_TABLES])
def test_a_published_reports_first_screen_at_1366x768_holds_its_whole_summary_plot(table, tmp_path):
    """The published study's report (seeds-gem5: 17 verdicts), rebuilt from a copy of its
    folder as `./study report --published` builds it: every verdict's row of the plot on
    the first screen, and the verdict table beside no horizontal scrolling."""
    from reclaimstudy.campaigns.publish import report_published
    study = table.parent.parent.name
    copy = tmp_path / "results" / "published" / study
    shutil.copytree(table.parent.parent, copy, ignore=shutil.ignore_patterns("in-flight"))
    html = report_published(load_study(study), tmp_path / "results")["html"]
    assert "data:image" not in html.read_text()
    screen, shot = first_screen(html, tmp_path)
    assert_summary_on_the_first_screen(screen, shot)


def test_runs_on_replaced_artefacts_are_set_aside_not_pooled(tmp_path):
    study = tmp_path / "smoke"
    shutil.copytree(RUNS / "smoke", study)
    # The same points again, later, on another image: a newer generation of runs.
    for old in list(study.iterdir()):
        new = study / f"{old.name}-newimage"
        shutil.copytree(old, new)
        record = changed(json.loads((new / "run.json").read_text()), ("artefacts", "image"),
                         "0123456789abcdef")
        record["run_id"] = new.name
        record["started_at"] = "2099-01-01T00:00:00+0000"
        (new / "run.json").write_text(json.dumps(record))
    table = build_table(study, "smoke")
    assert table["run_id"].nunique() == 18 and table.attrs["superseded"] == 18
    assert all(rid.endswith("-newimage") for rid in table["run_id"].unique())


def test_run_costs_average_wall_time_and_simulated_time_after_the_boot_checkpoint():
    from analysis.report import _costs

    def record(backend, wall, sim=None, status="ok", policy="baseline"):
        out = {"backend": backend, "system_name": "desktop-hdd-128", "experiment": "ebizzy",
               "policy_name": policy, "status": status, "wall_seconds": wall}
        if sim is not None:
            out["backend_info"] = {"sim_seconds": sim}
            out["artefacts"] = {"checkpoint": {"boot_sim_seconds": 1.5}}
        return PublishedRun(Path("."), out)

    rows = _costs([record("gem5", 400, 2.1), record("gem5", 500, 2.3),
                   record("gem5", 9999, 9.0, status="failed"), record("qemu", 3)])
    gem5, qemu = rows
    assert (gem5["backend"], gem5["runs"], gem5["wall_s"]) == ("gem5", 2, 450)
    assert gem5["sim_s"] == pytest.approx(0.7) and gem5["host_per_sim"] == pytest.approx(450 / 0.7)
    assert (qemu["runs"], qemu["wall_s"], qemu["sim_s"], qemu["host_per_sim"]) == (1, 3, None, None)


def test_totals_count_the_gem5_runs_a_stopped_sweep_cut_short_and_a_later_one_resumed():
    from analysis.report import _totals

    def record(resumed_at, status="ok"):
        return PublishedRun(Path("."), {"status": status, "wall_seconds": 3600, "backend_info": {
            "cpu_seconds": 1800, "resumed_at_segment": resumed_at}})
    got = _totals([record(0), record(3), record(1), record(5, status="failed"), record(None)])
    assert (got["runs"], got["wall_h"], got["cpu_h"], got["resumed_runs"]) == (4, 4, 2, 2)


def test_a_resumed_runs_host_time_counts_every_attempts_segments_not_only_the_last():
    from analysis.report import _costs, _totals

    def record(run_wall, segments_wall=None, resumed_at=0):
        info = {} if segments_wall is None else {"wall_seconds": segments_wall,
                                                 "resumed_at_segment": resumed_at}
        return PublishedRun(Path("."), {"backend": "gem5", "system_name": "desktop-hdd-96",
                                        "experiment": "ebizzy", "policy_name": "baseline",
                                        "status": "ok", "wall_seconds": run_wall,
                                        "backend_info": info})
    # resumed: its last attempt took 600 s of a run whose segments took 3000 s in all;
    # never cut: the run's own time, set-up included (its segments took 1790 s of 1800)
    runs = [record(600, 3000, resumed_at=3), record(1800, 1790), record(1200)]
    assert _totals(runs)["wall_h"] == pytest.approx((3000 + 1800 + 1200) / 3600)
    assert _costs(runs)[0]["wall_s"] == pytest.approx(2000)


def test_totals_count_the_runs_whose_restores_lowered_an_interrupt_pin_among_those_that_say():
    from analysis.report import _totals

    def record(pins=None, status="ok"):
        info = {} if pins is None else {"pins_lowered": pins}
        return PublishedRun(Path("."), {"status": status, "wall_seconds": 60, "backend_info": info})
    got = _totals([record(), record([]), record(["003: io_apic pin 14"]), record([]),
                   record(["001: pic2 pin 6"], status="failed")])
    assert (got["pins_runs"], got["pins_lowered_runs"]) == (3, 1)


def test_report_says_what_its_runs_cost(report):
    markdown = report["markdown"].read_text()
    section = markdown.split("## What the runs cost", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| qemu | ci-tiny |")]
    # one row per experiment and policy of the smoke study's fixture runs
    assert len(rows) == len({(r.split("|")[3], r.split("|")[4]) for r in rows}) >= 5
    assert 'id="run-costs"' in report["html"].read_text()


def test_a_report_whose_backends_ran_on_different_guests_says_so():
    from analysis.report import _guests, _inputs

    def record(backend, system, kernel, image):
        made = make_record(backend=backend, system=system, artefacts={"kernel": kernel,
                                                                      "image": image})
        return PublishedRun(Path("."), made)

    def guests(records):
        return _guests(_inputs(records))

    one_guest = [record("gem5", "desktop-hdd-128", "k1", "i1"),
                 record("qemu", "desktop-hdd-128", "k1", "i1"),
                 record("qemu", "desktop-hdd", "k1", "i2")]  # another memory size: its own image
    assert guests(one_guest) == []
    mixed = one_guest + [record("qemu", "desktop-hdd-128", "k0", "i0")]
    assert {(g["backend"], g["system"], g["kernel"]) for g in guests(mixed)} == {
        ("gem5", "desktop-hdd-128", "k1"), ("qemu", "desktop-hdd-128", "k0"),
        ("qemu", "desktop-hdd-128", "k1"), ("qemu", "desktop-hdd", "k1")}
    other_image = one_guest + [record("gem5", "desktop-hdd", "k1", "i3")]
    assert len(guests(other_image)) == 4


def test_the_fixture_report_comes_from_one_guest_and_says_nothing_of_it(report):
    assert "Not every number comes from the same guest" not in report["markdown"].read_text()
    assert 'id="mixed-guests"' not in report["html"].read_text()


def test_hot_streams_runs_give_the_seeds_vmstat_table_at_its_three_marks(tmp_path):
    from analysis.report import _vmmon
    from analysis.table import build_table

    def marks(base):  # begin (stream start), end (restore start), restore (done)
        names = [("phase", "begin"), ("phase", "stream"), ("phase", "restore"),
                 ("phases_done", "")]
        return [{"event": e, "name": n, "t": float(i),
                 "vmstat": {"nr_mapped": base + 10 * i, "pgfree": 1000 * i}}
                for i, (e, n) in enumerate(names)]
    for policy, base in (("baseline", 100), ("exec-protect-off", 200)):
        for rep in (0, 1):
            write_run(tmp_path, make_record(workload="hot-stream", policy=policy,
                                            repetition=rep), events=marks(base + rep))
    table = build_table(tmp_path, "smoke")
    vmmon = _vmmon(table, ["baseline", "exec-protect-off"])
    assert vmmon["columns"][:1] == ["nr_mapped"] and "pgfree" in vmmon["columns"]
    rows = {(r["policy"], r["mark"]): dict(zip(vmmon["columns"], r["values"]))
            for r in vmmon["rows"]}
    assert list(rows)[:3] == [("baseline", "begin"), ("baseline", "end"), ("baseline", "restore")]
    assert rows[("baseline", "begin")]["nr_mapped"] == 110.5  # the stream's start, mean of 2
    assert rows[("exec-protect-off", "restore")]["nr_mapped"] == 230.5
    assert rows[("baseline", "end")]["pgfree"] == 2000
    # gauges are shown, never compared
    from analysis.compare import compare
    assert not compare(table, "baseline")["metric"].str.startswith("vmmon_").any()


def test_each_seed_row_links_to_the_runs_of_its_policies(report):
    markdown = report["markdown"].read_text()
    for row in [line for line in markdown.splitlines() if re.match(r"\| 00\d \|", line)]:
        count, target = re.search(r"\| \[(\d+)\]\(#([a-z0-9-]+)\) \|$", row).groups()
        section = markdown.split(f'<div id="{target}"></div>')[1].split("<div id=")[0]
        policies = {"002": ("baseline", "madv-free-off"),
                    "001": ("old-refault-distance", "old-refault-distance-scan-anon-off",
                            "mglru")}[row[2:5]]
        listed = [line for line in section.splitlines()
                  if line.startswith("- ") and line[2:].split(":")[0] in policies]
        assert int(count) == sum(line.count("run.json") for line in listed) > 0


def test_rebuilds_of_one_simulator_share_an_entry_that_counts_each_binarys_runs():
    from analysis.report import _inputs

    def run(sha256, simulator="s1"):
        made = make_record(backend="gem5", system="desktop-hdd-128",
                           artefacts={"kernel": "k1", "image": "i1", "gem5": simulator,
                                      "checkpoint": "c1"})
        made["artefacts"]["gem5"] = {"version": "24.0.0.1", "variant": "fast",
                                     "simulator": simulator, "sha256": sha256}
        return PublishedRun(Path("."), made)

    entries = _inputs([run("a" * 64), run("b" * 64), run("a" * 64)])
    assert len(entries) == 1 and entries[0]["binaries"] == {"a" * 64: 2, "b" * 64: 1}
    assert list(entries[0]["binaries"]) == ["a" * 64, "b" * 64]  # first seen, first named
    assert len(_inputs([run("a" * 64), run("c" * 64, simulator="s2")])) == 2


def _quiet_rows(policy, run, quiet, sim, source="gem5", workload="thrash", phases=("fill", "access")):
    return [{"policy": policy, "run_id": run, "source": source, "metric": "quiet_s",
             "value": q, "phase": p, "workload": workload} for p, q in zip(phases, quiet)] + [
        {"policy": policy, "run_id": run, "source": source, "metric": "sim_seconds",
         "value": s, "phase": p, "workload": workload} for p, s in zip(phases, sim)]


def test_quiet_time_is_summed_per_run_and_runs_over_a_tenth_are_flagged():
    import pandas as pd
    from analysis.report import _quiet
    rows = pd.DataFrame(
        _quiet_rows("baseline", "b0", [1.0, 8.0], [2.0, 8.0])      # 9 of 10 s
        + _quiet_rows("baseline", "b1", [0.0, 0.05], [2.0, 8.0])   # 0.5%
        + _quiet_rows("baseline", "b2", [3.0, 3.0], [5.0, 5.0])    # 60%
        + _quiet_rows("mglru", "m0", [0.002, 0.0], [0.4, 0.4]))    # 0.25%
    baseline, mglru = _quiet(rows, ["baseline", "mglru"])
    assert baseline["runs"] == 3 and baseline["flagged"] == 2
    assert baseline["quiet_s"] == 6.0 and baseline["sim_s"] == 10.0
    assert baseline["share"] == pytest.approx(0.6)
    assert mglru["flagged"] == 0 and mglru["share"] == pytest.approx(0.0025)
    # hot-stream's begin and restore phases sleep by design: their quiet time is its own
    hot = pd.DataFrame(_quiet_rows("baseline", "h0", [0.1, 0.05, 0.2], [0.1, 1.0, 0.3],
                                   workload="hot-stream", phases=("begin", "stream", "restore")))
    assert _quiet(hot, ["baseline"])[0]["quiet_s"] == pytest.approx(0.05)
    # QEMU runs have no gem5 statistics: nothing to say
    assert _quiet(pd.DataFrame(_quiet_rows("baseline", "q0", [1.0], [1.0], "workload")),
                  ["baseline"]) == []


def test_the_report_names_the_experiments_with_quiet_runs_at_its_top():
    from types import SimpleNamespace
    from jinja2 import Environment, FileSystemLoader
    from analysis.report import TEMPLATES
    env = Environment(loader=FileSystemLoader(TEMPLATES), trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = lambda v: f"{v:.4g}"
    env.filters["rel"] = str
    quiet = [{"policy": "baseline", "runs": 5, "quiet_s": 9.0, "sim_s": 10.0, "share": 0.9,
              "flagged": 5}]
    markdown = env.get_template("report.md.j2").render(
        study=SimpleNamespace(name="s", description="d", baseline="baseline"), exported=[],
        backends=["gem5"], quiet_flag=0.1, totals={"runs": 5, "wall_h": 1.0, "cpu_runs": 0},
        quiet_flagged=[{"experiment": "thrash", "anchor": "exp-thrash", "system": "ssd",
                        "runs": 5, "of": 5}],
        experiments=[{"name": "thrash", "system": "ssd", "backend": "gem5", "anchor": "exp-thrash",
                      "quiet": quiet, "figures": [], "runs": [], "text": ""}])
    top = markdown.split('<div id="seed-reproduction"></div>')[0]
    assert "more than 10% of a\n> run's simulated time" in top
    assert "> - [thrash on ssd](#exp-thrash): 5 of 5 runs" in top
    assert ("**Quiet time** (simulated time with neither the CPU nor a disk busy, a lower "
            "bound; median per run): baseline 9 s of 10 s (90%, **5 of 5 runs over 10%**).") in markdown


def test_a_timeline_spanning_decades_gets_a_log_axis_and_one_with_zeros_does_not():
    from analysis.report import spans_decades
    assert spans_decades([0.25, 0.06, 0.0008])  # thrash's rounds, settling
    assert not spans_decades([0.25, 0.2, 0.18])  # every round from disk
    assert not spans_decades([120.0, 0.0, 3.0])  # a count that reaches 0: no log axis
    assert not spans_decades([float("nan"), 1.0]) and not spans_decades([])


def test_the_per_step_plot_draws_a_band_where_repetitions_differ(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt
    from analysis import report
    rows = pd.DataFrame([
        {"policy": policy, "repetition": rep, "metric": "round_s", "index": float(i),
         "value": value, "unit": "s"}
        for policy, per_rep in {"baseline": [[0.2, 0.1], [2.4, 0.3]],  # differ: a band
                                "mglru": [[0.25, 0.01], [0.25, 0.01]]}.items()  # equal: none
        for rep, values in enumerate(per_rep) for i, value in enumerate(values)])
    drawn = {}
    monkeypatch.setattr(report, "_finish", lambda fig, title, path: drawn.setdefault("fig", fig))
    report._timeline_plot(rows, ["baseline", "mglru"], "t", tmp_path / "t.png")
    ax = drawn["fig"].axes[0]
    bands = ax.collections
    assert len(bands) == 1  # only the baseline's repetitions differ
    band = bands[0].get_paths()[0].vertices
    assert band[:, 1].max() == pytest.approx(2.4) and band[:, 1].min() == pytest.approx(0.1)
    assert [list(line.get_ydata()) for line in ax.lines] == [[pytest.approx(1.3), pytest.approx(0.2)],
                                                             [0.25, 0.01]]
    plt.close(drawn["fig"])


def test_a_one_panel_plot_keeps_its_long_title_and_whole_steps_on_the_figure(tmp_path, monkeypatch):
    import matplotlib.image
    import matplotlib.pyplot as plt
    from analysis import report
    rows = pd.DataFrame([{"policy": "baseline", "repetition": 0, "metric": "pass_s",
                          "index": float(i), "value": 1.0 + i / 10, "unit": "s"} for i in (1, 2)])
    title = "iozone-mmap: per step (line: mean; band: min-max over repetitions)"
    closed = []
    monkeypatch.setattr(report.plt, "close", closed.append)  # keep the saved figure to measure
    path = report._timeline_plot(rows, ["baseline"], title, tmp_path / "t.png")
    [fig] = closed
    renderer = fig.canvas.get_renderer()
    assert fig._suptitle.get_text().replace("\n", " ") == title
    box = fig._suptitle.get_window_extent(renderer)
    assert box.x0 >= 0 and box.x1 <= fig.get_figwidth() * fig.dpi  # all of it on the figure
    ticks = [t.get_text().replace("\N{MINUS SIGN}", "-") for t in fig.axes[0].get_xticklabels()]
    assert ticks and all(float(t).is_integer() for t in ticks if t)  # passes 1 and 2, no 1.2
    assert matplotlib.image.imread(path).shape[1] > 100
    monkeypatch.undo()
    plt.close(fig)


def test_the_phase_plot_shows_every_repetition_beside_the_mean(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt
    from analysis import report
    fills = {"baseline": [0.19, 2.4, 0.2], "mglru": [0.25, 0.26, 0.25]}  # thrash's bimodal fill
    rows = pd.DataFrame([{"policy": policy, "repetition": rep, "phase": "fill", "metric": "phase_s",
                          "index": None, "value": value, "unit": "s"}
                         for policy, values in fills.items() for rep, value in enumerate(values)])
    drawn = {}
    monkeypatch.setattr(report, "_finish", lambda fig, title, path: drawn.setdefault("fig", fig))
    report._phase_plot(rows, ["baseline", "mglru"], "t", tmp_path / "t.png")
    ax = drawn["fig"].axes[0]
    heights = [bar.get_height() for bar in ax.patches]
    assert heights == [pytest.approx(sum(v) / 3) for v in fills.values()]
    assert [sorted(line.get_ydata()) for line in ax.lines] == [sorted(v) for v in fills.values()]
    plt.close(drawn["fig"])


def test_the_metric_bars_show_each_repetition_as_a_dot(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt
    from analysis import report
    firsts = {"baseline": [0.05, 0.26, 0.06], "mglru": [0.24, 0.25, 0.26]}
    raw = pd.DataFrame([{"policy": policy, "repetition": rep, "phase": None, "metric": "first_round_s",
                         "index": None, "value": value, "unit": "s"}
                        for policy, values in firsts.items() for rep, value in enumerate(values)])
    part = pd.DataFrame([{"policy": policy, "phase": "", "metric": "first_round_s", "unit": "s",
                          "mean": sum(values) / 3} for policy, values in firsts.items()])
    drawn = {}
    monkeypatch.setattr(report, "_finish", lambda fig, title, path: drawn.setdefault("fig", fig))
    report._bar_plot(part, raw, ["baseline", "mglru"], "t", tmp_path / "t.png")
    ax = drawn["fig"].axes[0]
    assert [bar.get_height() for bar in ax.patches] == [pytest.approx(sum(v) / 3) for v in firsts.values()]
    assert [(set(line.get_xdata()), sorted(line.get_ydata())) for line in ax.lines] == \
        [({x}, sorted(v)) for x, v in enumerate(firsts.values())]
    plt.close(drawn["fig"])


def test_a_failed_run_is_listed_with_a_link_to_its_run_json(tmp_path):
    results = tmp_path / "results"
    shutil.copytree(RUNS / "smoke", results / "smoke")
    run_id = "lazyfree-madv-free-off-ci-tiny-r1-qemu-20e2b90b66"
    path = results / "smoke" / run_id / "run.json"
    record = json.loads(path.read_text())
    path.write_text(json.dumps({**record, "status": "failed",
                                "reason": "gem5 guest-disk-error: the guest's disk stopped answering"}))
    markdown = build_report(load_study("smoke"), results)["markdown"].read_text()
    failed = markdown.split("## Failed runs")[1].split("\n## ")[0]
    assert (f"| [{run_id}](../{run_id}/run.json) | lazyfree | madv-free-off | ci-tiny | qemu | "
            "gem5 guest-disk-error: the guest's disk stopped answering |") in failed


def test_a_seeds_number_in_a_phase_no_run_has_is_listed_as_unmeasured():
    from analysis.seeds import unmeasured
    table = pd.DataFrame([
        {"workload": "lazyfree", "source": "workload", "phase": phase} for phase in
        ("arena-t1", "arena-t2", "jemalloc-t1")] + [
        {"workload": "thrash", "source": "workload", "phase": None}])
    seeds = pd.DataFrame([{"seed": "002", "metric": "records_per_s", "phase": phase}
                          for phase in ("arena-t1", "arena-t2")])
    listed = unmeasured(seeds, table)
    # seed 002's four threads: its workload ran, that phase did not; thrash (seed 001) ran
    # but has no row at all, so it is the seed table's business, not this list's
    assert [(u["seed"], u["phase"], u["phases_run"]) for u in listed] == [
        ("002", "arena-t4", ["arena-t1", "arena-t2", "jemalloc-t1"])]
    seeds.loc[2] = {"seed": "002", "metric": "records_per_s", "phase": "arena-t4"}
    assert unmeasured(seeds, table) == []
    assert unmeasured(pd.DataFrame(), table) == []


def test_an_experiment_kept_on_an_older_instrument_says_so_and_why(tmp_path):
    """In a study that keeps experiments on an older instrument, every experiment's
    section names the kernel (and simulator) its runs ran on, and a kept one why it may
    stand beside newer runs; a study that keeps none says nothing of it."""
    from dataclasses import replace
    results = tmp_path / "results"
    shutil.copytree(RUNS / "smoke", results / "smoke")
    why = "its runs on the older kernel are kept: the newer one only adds unused drivers"
    study = replace(load_study("smoke"), older_instrument=(("thrash", why),))
    markdown = build_report(study, results)["markdown"].read_text()
    sections = re.split(r"\n### ", markdown)
    thrash = next(s for s in sections if s.startswith("thrash on ci-tiny [qemu]"))
    smoke = next(s for s in sections if s.startswith("smoke on ci-tiny [qemu]"))
    kernel = re.search(r"Instrument: kernel `(\w+)`", smoke).group(1)
    assert f"Instrument: kernel `{kernel}`; kept on an older instrument than the " \
           f"study's newest: {why}." in thrash
    assert "kept on an older" not in smoke
    # one guest throughout here: no warning of mixed guests either way
    assert 'id="mixed-guests"' not in markdown
    assert "Instrument:" not in build_report(load_study("smoke"), results)["markdown"].read_text()


def test_a_study_keeping_an_experiment_on_an_older_kernel_reports_it_beside_the_newer(
        tmp_path):
    """Thrash's fixture runs moved onto an older kernel: without the study file's
    [older_instrument] they are superseded by the others' newer kernel (no thrash
    section); with it their rows stay, their section names the older kernel and why, and
    the mixed-guest warning says which experiment the study keeps so, not to sweep again."""
    from dataclasses import replace
    from tests.runfactory import changed
    results = tmp_path / "results"
    shutil.copytree(RUNS / "smoke", results / "smoke")
    for directory in sorted((results / "smoke").glob("thrash-*")):
        old = json.loads((directory / "run.json").read_text())
        new = changed(old, ("artefacts", "kernel"), "k-older")
        new["artefacts"]["kernel"]["key"] = "k-older"
        new["started_at"] = "2020-01-01T00:00:00+0000"
        directory.rename(directory.with_name(new["run_id"]))
        (directory.with_name(new["run_id"]) / "run.json").write_text(json.dumps(new))
    plain = build_report(load_study("smoke"), results)["markdown"].read_text()
    assert "### thrash on" not in plain
    why = "a test's reason"
    study = replace(load_study("smoke"), older_instrument=(("thrash", why),))
    markdown = build_report(study, results)["markdown"].read_text()
    thrash = markdown.split("### thrash on ci-tiny [qemu]", 1)[1].split("\n### ", 1)[0]
    assert f"Instrument: kernel `k-older`; kept on an older instrument than the study's " \
           f"newest: {why}." in thrash
    warning = markdown.split('<div id="mixed-guests"></div>', 1)[1].split("\n\n", 2)[1]
    assert warning.startswith("> Not every number comes from the same guest: the study file "
                              "keeps\n> thrash on an older instrument")
    assert "Sweep the study again" not in markdown
