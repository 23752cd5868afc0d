"""DiskSim 4.0 (`./study disksim --source DIR`): the checkout is found or clearly refused,
the cache key follows the source and not what the build writes, and, with DISKSIM naming
a checkout, the built DiskSim reproduces its own validation: each of runvalid's ten drives
within 0.005 ms of the RMS figure runvalid expects."""

import os
import time
from pathlib import Path

import pytest

from reclaimstudy.artefacts import disksim as disksim_build, disksim_validation
from reclaimstudy.cli import build_parser
from reclaimstudy.errors import StudyError
from reclaimstudy.hashing import json_sha256

SOURCE = os.environ.get("DISKSIM")
needs_disksim = pytest.mark.skipif(
    not SOURCE, reason="DISKSIM is not set (a clone of github.com/westerndigitalcorporation/"
                       "DiskSim, or its STABLE/DiskSim_Linux_Generic_2.01.016 tree)")
TOLERANCE_MS = 0.005

RUNVALID = """#!/bin/sh

PREFIX=../src

echo ""
echo "These results represent actual drive validation experiments"

echo ""
echo "IBM_DNES-309170W (rms should be about 0.135)"
${PREFIX}/disksim ibm18es.parv ibm18es.outv validate ibm18es.trace 0\\
&& ${PREFIX}/rms ibm18es.outv ibm18es.outv -1 -1 1

echo ""
echo "DEC_RZ26_validate (rms should be about 0.340)"
${PREFIX}/disksim dec_rz26.parv dec_rz26.outv validate dec_rz26.trace 0\\
&& ${PREFIX}/rms dec_rz26.outv dec_rz26.outv -1 -1 1

echo ""
echo "syssim: externally-controlled DiskSim (avg. resp should be about 8.9 msec)"
${PREFIX}/syssim cheetah4LP.parv syssim.outv 2676846\\
&& grep "IOdriver Response time average" syssim.outv
"""


def fake_tree(root: Path, version: str = "2.01.016") -> Path:
    for name in ("src", "valid"):
        (root / name).mkdir(parents=True, exist_ok=True)
    (root / "Makefile").write_text("all:\n")
    (root / "src" / "disksim_interface.h").write_text("struct disksim_request;\n")
    (root / "src" / "disksim_global.h").write_text(f'#define VERSION "{version}"\n')
    (root / "src" / "disksim.c").write_text("int main() { return 0; }\n")
    (root / "valid" / "runvalid").write_text(RUNVALID)
    return root


def test_a_folder_that_is_not_a_disksim_checkout_is_named_and_refused(tmp_path):
    (tmp_path / "gem5" / "src").mkdir(parents=True)
    with pytest.raises(StudyError, match=rf"{tmp_path / 'gem5'} is not a DiskSim checkout: give "
                                         r"a clone of github.com/westerndigitalcorporation/"
                                         r"DiskSim \(it has STABLE/DiskSim_Linux_Generic_2.01.016"
                                         r"\) or that tree itself"):
        disksim_build.find_tree(tmp_path / "gem5", "2.01.016")
    with pytest.raises(StudyError, match=rf"--source {tmp_path / 'nowhere'}: no such directory"):
        disksim_build.find_tree(tmp_path / "nowhere", "2.01.016")


def test_the_tree_is_found_from_the_repository_root_or_given_itself(tmp_path):
    tree = fake_tree(tmp_path / "DiskSim" / disksim_build.STABLE_TREE)
    assert disksim_build.find_tree(tmp_path / "DiskSim", "2.01.016") == tree
    assert disksim_build.find_tree(tree, "2.01.016") == tree


def test_the_experimental_tree_is_refused_saying_why(tmp_path):
    tree = fake_tree(tmp_path / "EXPERIMENTAL" / "Linux_64bit_LBA_20130807_Generic", "5.00.000")
    with pytest.raises(StudyError, match=r"is DiskSim 5.00.000, but disksim-patches/ is made "
                                         r"against DiskSim 2.01.016.*aborts on every validation"):
        disksim_build.find_tree(tree, "2.01.016")


def test_the_series_names_its_disksim_version_and_every_patch_exists():
    series = disksim_build.read_series()
    assert series.version == "2.01.016"
    assert all(p.is_file() for p in series.patches)


def test_the_cache_key_follows_the_source_not_what_the_build_writes(tmp_path):
    tree = fake_tree(tmp_path / "DiskSim")
    digest = lambda: disksim_build.source_digest(tree, disksim_build.source_files(tree))
    clean = digest()
    # What make and runvalid leave behind: objects, libraries, headers copied to include/,
    # mod.pl's module sources, the parser, executables, validation outputs.
    (tree / "src" / "disksim.o").write_bytes(b"\x7fELF object")
    (tree / "src" / "disksim").write_bytes(b"\x7fELF\x02\x01 executable")
    (tree / "lib").mkdir()
    (tree / "lib" / "libdisksim.a").write_bytes(b"!<arch>\n")
    (tree / "include").mkdir()
    (tree / "include" / "disksim_interface.h").write_text("copied\n")
    (tree / "src" / "modules").mkdir()
    (tree / "src" / "modules" / "disksim_disk_param.c").write_text("generated\n")
    (tree / "src" / "modules" / "disk.modspec").write_text("source\n")
    (tree / "valid" / "ibm18es.outv").write_text("output\n")
    (tree / "valid" / "log_sim_results.csv").write_text("output\n")
    assert "src/modules/disk.modspec" in map(str, disksim_build.source_files(tree))
    (tree / "src" / "modules" / "disk.modspec").unlink()
    assert digest() == clean
    (tree / "src" / "disksim.c").write_text("int main() { return 1; }\n")
    assert digest() != clean


def test_a_finished_build_is_reused_without_building(tmp_path, monkeypatch):
    monkeypatch.setenv("RECLAIMSTUDY_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(disksim_build, "_build", lambda *a: pytest.fail("rebuilt a cached build"))
    tree = fake_tree(tmp_path / "DiskSim" / disksim_build.STABLE_TREE)
    _, inputs = disksim_build.build_inputs(tmp_path / "DiskSim")
    assert disksim_build.build_inputs(tree)[1] == inputs  # the root or the tree: one build
    work = tmp_path / "cache" / "disksim" / json_sha256(inputs)[:16]
    work.mkdir(parents=True)
    (work / "manifest.json").write_text("{}")
    build = disksim_build.build_disksim(tmp_path / "DiskSim")
    assert build.binary == work / "source" / "src" / "disksim"
    assert build.libraries[0] == work / "source" / "src" / "libdisksim.a"


def test_the_command_line_has_disksim_with_a_required_source():
    args = build_parser().parse_args(["disksim", "--source", "/src/DiskSim"])
    assert args.source == Path("/src/DiskSim") and args.func.__name__ == "cmd_disksim"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["disksim"])


def test_runvalid_gives_the_drives_their_files_and_expected_figures(tmp_path):
    valid = fake_tree(tmp_path) / "valid"
    cases = disksim_validation.runvalid_cases(valid)
    assert cases == [
        disksim_validation.ValidationCase("IBM_DNES-309170W", 0.135, "ibm18es.parv",
                                          "ibm18es.outv", "ibm18es.trace"),
        disksim_validation.ValidationCase("DEC_RZ26_validate", 0.340, "dec_rz26.parv",
                                          "dec_rz26.outv", "dec_rz26.trace")]
    syssim = disksim_validation.runvalid_interface_case(valid)
    assert (syssim.expected_ms, syssim.parameters, syssim.sectors) == (8.9, "cheetah4LP.parv",
                                                                      2676846)


def test_a_runvalid_that_compares_otherwise_is_refused(tmp_path):
    valid = fake_tree(tmp_path) / "valid"
    # Response times (0) instead of physical access times (1): another figure.
    (valid / "runvalid").write_text(RUNVALID.replace("ibm18es.outv -1 -1 1",
                                                     "ibm18es.outv -1 -1 0"))
    with pytest.raises(StudyError, match=r"runvalid:9: 'IBM_DNES-309170W' is not followed by "
                                         r"the two lines this project reproduces"):
        disksim_validation.runvalid_cases(valid)
    (valid / "runvalid").write_text("#!/bin/sh\necho nothing\n")
    with pytest.raises(StudyError, match="validates no drive"):
        disksim_validation.runvalid_cases(valid)


def outv(rows_by_title: dict[str, list[tuple[float, float]]]) -> str:
    """A DiskSim output with distributions: rows of (value ms, cumulative fraction)."""
    lines = ["IOdriver Response time average: \t12.000000"]
    for title, rows in rows_by_title.items():
        lines.append(title)
        lines += [f" {x:.3f}  \t      1  \t0.000000  \t{y:.6f}" for x, y in rows]
        lines.append("")
    return "\n".join(lines) + "\n"


def test_the_rms_distance_of_two_distributions():
    measured = [(0.0, 0.0), (1.0, 0.25), (2.0, 0.5), (3.0, 0.75), (4.0, 1.0)]
    shifted = [(x + 0.5, y) for x, y in measured]
    text = outv({disksim_validation.SIMULATED: shifted, disksim_validation.MEASURED: measured})
    sim = disksim_validation.distribution(text, disksim_validation.SIMULATED, "x.outv")
    meas = disksim_validation.distribution(text, disksim_validation.MEASURED, "x.outv")
    assert sim == ([0.5, 1.5, 2.5, 3.5, 4.5], [0.0, 0.25, 0.5, 0.75, 1.0])
    # Every quantile 0.5 ms later: the distance is 0.5 ms; a distribution from itself, 0.
    assert disksim_validation.rms_distance(sim, meas) == pytest.approx(0.5, abs=1e-9)
    assert disksim_validation.rms_distance(meas, meas) == 0.0
    # Linear within a row: the median of [(0, 0), (4, 1)] is 2.
    assert disksim_validation.quantile([0.0, 4.0], [0.0, 1.0], 0.5) == 2.0


def test_a_flat_stretch_takes_its_first_row_at_a_quantile_it_equals():
    # Cumulative 0.5 from 1 ms to 3 ms (empty rows): the median is where 0.5 is first reached.
    values, cumulative = [0.0, 1.0, 2.0, 3.0, 4.0], [0.0, 0.5, 0.5, 0.5, 1.0]
    assert disksim_validation.quantile(values, cumulative, 0.5) == 1.0
    assert disksim_validation.quantile(values, cumulative, 0.75) == 3.5
    points = disksim_validation.quantile_points()
    assert len(points) == 10000 and points[0] == 0.0001 and 0.9999999 < points[-1] <= 1.0


def test_a_missing_or_truncated_distribution_is_a_clear_error():
    text = outv({disksim_validation.MEASURED: [(0.0, 0.0), (1.0, 0.4)]})
    with pytest.raises(StudyError, match=r"a.outv: no 'IOdriver Physical access time "
                                         r"distribution' \(not a DiskSim validate-mode output"):
        disksim_validation.distribution(text, disksim_validation.SIMULATED, "a.outv")
    with pytest.raises(StudyError, match=r"'VALIDATE Trace access time distribution' ends "
                                         r"\(line 5\) before its cumulative fraction reaches 1 "
                                         r"\(last 0.4\)"):
        disksim_validation.distribution(text, disksim_validation.MEASURED, "a.outv")
    falling = outv({disksim_validation.MEASURED: [(0.0, 0.5), (1.0, 0.4), (2.0, 1.0)]})
    with pytest.raises(StudyError, match=r"a.outv:4: .* falls from 0.5 to 0.4"):
        disksim_validation.distribution(falling, disksim_validation.MEASURED, "a.outv")


def test_the_drive_is_read_from_the_parameter_files(tmp_path):
    (tmp_path / "ibm18es.parv").write_text(
        "source ibm18es.diskspecs\ninstantiate [ statfoo ] as Stats\n"
        "instantiate [ disk0 ] as  IBM_DNES-309170W_validate\n")
    (tmp_path / "ibm18es.diskspecs").write_text(
        "disksim_disk IBM_DNES-309170W_validate {\n   Model = source ibm18es.model,\n}\n")
    (tmp_path / "ibm18es.model").write_text(
        "dm_disk IBM_DNES-309170W_validate_model {\n   Number of data surfaces = 5,\n"
        "   Number of cylinders = 11474,\n   Block count = 17916240,\n"
        "      Rotation speed (in rpms) = 7200,\n}\n")
    drive = disksim_validation.drive_of(tmp_path, "ibm18es.parv")
    assert (drive.name, drive.model_file, drive.rpm, drive.blocks, drive.surfaces,
            drive.cylinders) == ("IBM_DNES-309170W_validate", "ibm18es.model", 7200.0,
                                 17916240, 5, 11474)
    assert drive.capacity_gb == pytest.approx(9.173, abs=0.001)


# With a real checkout: the build, its cache, and DiskSim's own validation.

@pytest.fixture(scope="module")
def built():
    return disksim_build.build_disksim(Path(SOURCE))


@pytest.mark.source
@needs_disksim
def test_the_build_is_cached_and_has_what_an_embedding_links(built):
    started = time.monotonic()
    again = disksim_build.build_disksim(Path(SOURCE))
    assert again == built and time.monotonic() - started < 30
    assert all(p.is_file() for p in built.products())
    assert (built.include_dirs[1] / "disksim_reqflags.h").is_file()
    assert built.manifest["disksim_version"] == "2.01.016"
    # Everything the build wrote is recognised as output: the built copy hashes as the
    # user's tree with disksim-patches/ applied did before make (the user's tree itself,
    # with an empty series).
    tree = built.tree
    assert (disksim_build.source_digest(tree, disksim_build.source_files(tree))
            == built.manifest["patched_sha256"])


@pytest.mark.source
@needs_disksim
def test_disksim_reproduces_runvalids_figure_for_each_of_its_ten_drives(built):
    results = disksim_validation.validate(built)
    table = "\n".join(f"{r.case.label}: ours {r.rms:.6f}, DiskSim's rms {r.rms_disksim:.6f}, "
                      f"runvalid expects {r.case.expected_rms:.3f}" for r in results)
    print(table)
    assert len(results) == 10, table
    for r in results:
        # Our computation is DiskSim's to the 6 decimals its rms prints...
        assert r.rms == pytest.approx(r.rms_disksim, abs=1e-6), table
        # ...and each model is as close to its drive as DiskSim's authors recorded.
        assert abs(r.difference) <= TOLERANCE_MS, table


@pytest.mark.source
@needs_disksim
def test_disksim_driven_through_its_interface_gives_runvalids_figure(built):
    """The external-control example (src/syssim_driver.c through disksim_interface.h),
    the interface gem5 will drive DiskSim through."""
    average, expected = disksim_validation.interface_check(built)
    assert abs(average - expected) <= 0.05  # runvalid rounds it to 0.1 ms
