"""One entry point, one subcommand per step of a study: kernel, image, run, sweep, ..."""

import argparse
import os
import signal
import sys
import threading
from pathlib import Path

from rich.text import Text

from reclaimstudy.campaigns.carry import DEFAULT_MIN_CPU_S
from reclaimstudy.campaigns.sweep import STATUS_EVERY_S
from reclaimstudy.errors import StudyError
from reclaimstudy.paths import RESULTS
from reclaimstudy.util.progress import console


def cmd_kernel(args) -> int:
    from reclaimstudy.artefacts import kernel

    built = kernel.build_kernel(jobs=args.jobs, force=args.force)
    print(built.directory)
    return 0


def cmd_gem5(args) -> int:
    from reclaimstudy.artefacts.gem5 import build_gem5
    build = build_gem5(args.source, variant=args.variant, jobs=args.jobs, disksim=args.disksim,
                       simplessd=args.simplessd)
    linked = "".join(f" and {name} {build.manifest[key]['key']}"
                     for key, name in (("disksim", "DiskSim"), ("simplessd", "SimpleSSD"))
                     if build.manifest.get(key))
    console.print(f"gem5 with gem5-patches/{linked} built: {build.binary}")
    print(f"export GEM5={build.binary}")
    return 0


def cmd_disksim(args) -> int:
    from reclaimstudy.artefacts.disksim import build_disksim
    build = build_disksim(args.source)
    m = build.manifest
    console.print(f"DiskSim {m['disksim_version']} built ({m['compiler']}, "
                  f"{m['build_seconds']:.0f} s): {build.binary}")
    console.print(f"  to embed it: {' '.join(str(p) for p in build.libraries)} -lm; "
                  f"headers in {' '.join(str(p) for p in build.include_dirs)}")
    console.print(f"  its validation (runvalid's drives and traces): {build.validation_dir}")
    print(build.directory)
    return 0


def cmd_simplessd(args) -> int:
    from reclaimstudy.artefacts.simplessd import build_simplessd
    build = build_simplessd(args.source, jobs=args.jobs)
    m = build.manifest
    console.print(f"SimpleSSD {m['simplessd_version']} standalone built ({m['compiler']}, "
                  f"{m['build_seconds']:.0f} s): {build.binary}")
    console.print("  its drives: configs/simplessd/; their validation: "
                  "tests/test_simplessd_validation.py")
    print(build.directory)
    return 0


def cmd_image(args) -> int:
    from reclaimstudy.artefacts.image import build_image
    from reclaimstudy.config.systems import get_system

    built = build_image(get_system(args.system), force=args.force)
    print(built.directory)
    return 0


def cmd_boot(args) -> int:
    from reclaimstudy.artefacts.image import build_image
    from reclaimstudy.artefacts.kernel import build_kernel
    from reclaimstudy.backends.gem5 import backend as gem5_backend
    from reclaimstudy.config.systems import get_system

    system = get_system(args.system)
    gem5 = gem5_backend.find_gem5()
    gem5_backend.require_patches(gem5, system)
    checkpoint = gem5_backend.ensure_checkpoint(gem5, build_kernel(), build_image(system), system)
    print(checkpoint)
    return 0


def parse_params(pairs: list[str]) -> dict:
    """NAME=VALUE words from the command line, values typed as int, float or text."""
    values: dict[str, int | float | str] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name:
            raise StudyError(f"--param {pair!r}: expected NAME=VALUE")
        for kind in (int, float):
            try:
                values[name] = kind(text)
                break
            except ValueError:
                continue
        else:
            values[name] = text
    return values


def cmd_run(args) -> int:
    from reclaimstudy.backends import get_backend
    from reclaimstudy.campaigns import runs
    from reclaimstudy.config.policies import get_policy
    from reclaimstudy.config.systems import get_system
    from reclaimstudy.config.workloads import get_workload
    from reclaimstudy.results.record import read_run

    backend = get_backend(args.backend)
    workload = get_workload(args.workload)
    spec = runs.RunSpec(
        study=args.study, system=get_system(args.system), policy=get_policy(args.policy),
        workload=workload, arguments=workload.arguments(parse_params(args.param)),
        repetition=args.repetition, backend=args.backend,
        checkpoint_every_s=args.checkpoint_every, job_extra=_job_extra(args.job_extra))
    # A finished run is not redone by accident: redoing it would replace its directory
    # (and a gem5 run can take hours). "Finished" as a sweep judges it: published, ok.
    study_path = runs.study_dir(spec.study, args.results)
    done = study_path / runs.run_id(spec, backend.identity(spec))
    earlier = read_run(done)
    if earlier and earlier.ok and not args.again:
        console.print(f"run {done.name}: already done -> {done} (--again to run it again)")
        return 0
    record = runs.execute(spec, backend, results=args.results, timeout_s=args.timeout)
    where = study_path / record["run_id"]
    if record["status"] == "ok":
        console.print(f"run {record['run_id']}: ok in {record['wall_seconds']:.0f} s -> {where}")
        return 0
    console.print(Text.assemble(("run failed: ", "bold red"), f"{record['reason']} -> {where}"), soft_wrap=True)
    return 1


def _job_extra(path: Path | None) -> str:
    if path is None:
        return ""
    try:
        return path.read_text()
    except OSError as error:
        raise StudyError(f"--job-extra {path}: cannot read it ({error.strerror}); allowed: a "
                         "file of shell lines, such as analysis/traces/hot-stream-faults.sh")


def cmd_sweep(args) -> int:
    from reclaimstudy.campaigns.studies import load_study
    from reclaimstudy.campaigns.sweep import run_sweep

    study = load_study(args.study)
    if getattr(args, "only", None):
        study = study.select(args.only)
    backend = resolve_backend(args.backend)
    if args.on == "slurm":
        from reclaimstudy.campaigns.cluster import SlurmOptions, submit

        if args.jobs is not None:
            raise StudyError("--jobs is for a sweep on this machine; on Slurm, --max-running "
                             "caps the tasks at once")
        submit(study, backend, args.results, SlurmOptions(
            partition=args.partition, account=args.account, time=args.time,
            mem_mib=args.mem, max_running=args.max_running, prepare_time=args.prepare_time,
            prepare_cpus=args.prepare_cpus, extra=args.sbatch), timeout_s=args.timeout)
        return 0
    result = run_sweep(study, backend, args.results, jobs=args.jobs, timeout_s=args.timeout,
                       status_every_s=args.status_every)
    console.print(f"sweep {study.name}: {result.planned} runs, {result.skipped} already done, "
                  f"{result.done - result.not_needed} run now, {len(result.failed)} failed"
                  + (f", {result.not_needed} not needed (their experiment decided at a look)"
                     if result.not_needed else ""))
    return 0 if result.ok else 1


def cmd_status(args) -> int:
    from reclaimstudy.campaigns.cluster import print_status
    from reclaimstudy.campaigns.studies import load_study

    states = print_status(load_study(args.study), resolve_backend(args.backend, showing=True),
                          args.results)
    return 1 if any(s.state == "failed" for s in states) else 0


def cmd_slurm_step(args) -> int:
    from reclaimstudy.campaigns import cluster

    step = cluster.prepare_step if args.command == "slurm-prepare" else cluster.task_step
    return step(args.ledger)


def cmd_compare(args) -> int:
    from analysis.compare import compare, format_text
    from analysis.table import export, study_folder_table
    from reclaimstudy.campaigns.studies import load_study

    study = load_study(args.study)
    table = study_folder_table(study, args.results / study.name)[1]
    if args.export:
        for path in export(table, args.export):
            console.print(f"wrote {path}")
    print(format_text(compare(table, args.baseline or study.baseline),
                      args.baseline or study.baseline))
    return 0


def cmd_pairs(args) -> int:
    from analysis.pairs import experiment_rows, format_pairs, metric_pairs
    from reclaimstudy.campaigns.studies import load_study

    study = load_study(args.study)
    if args.published:
        from analysis.published import published_table
        table = published_table(study, args.results)
    else:
        from analysis.table import study_folder_table
        table = study_folder_table(study, args.results / study.name)[1]
    rows = experiment_rows(table, args.experiment, args.system)
    print("\n\n".join(format_pairs(metric_pairs(rows, spec, args.baseline or study.baseline))
                      for spec in args.metrics))
    return 0


def cmd_replay(args) -> int:
    from analysis.sequential_replay import format_replay, replay_published
    from reclaimstudy.campaigns.studies import load_study
    from reclaimstudy.config.verdict_rules import verdict_rules

    study = load_study(args.study)
    looks = args.looks or study.verdicts.looks
    if not looks:
        raise StudyError(f"study {study.name} declares no looks ([verdicts] looks); give --looks, "
                         f"e.g. --looks 3,5,10")
    verdict_rules({"looks": list(looks), "spending": args.spending or study.verdicts.spending},
                  "--looks/--spending")
    (rows, experiments), rules = replay_published(study, args.results, looks, args.spending)
    print(format_replay(rows, experiments, rules))
    return 0


def cmd_ladder(args) -> int:
    from analysis.ladder import compare_rungs, format_ladder
    from analysis.published import published_dir, published_table
    from analysis.regimes import regime_checks
    from analysis.table import study_folder_table
    from reclaimstudy.campaigns.studies import load_study
    from reclaimstudy.results.record import published_runs

    rung, reference = load_study(args.study), load_study(args.against)
    if args.published:
        rung_table = published_table(rung, args.results)
        rung_runs = published_runs(published_dir(rung.name, args.results), rung.name)
    else:
        rung_runs, rung_table = study_folder_table(rung, args.results / rung.name)
    ref_table = published_table(reference, args.results)
    ref_runs = published_runs(published_dir(reference.name, args.results), reference.name)
    ids = set(ref_table["run_id"])
    ref_runs = [run for run in ref_runs if run.record["run_id"] in ids]
    result = compare_rungs(ref_table, ref_runs, rung_table, rung_runs, reference.baseline,
                           reference.verdicts, (regime_checks(ref_table, ref_runs),
                                                regime_checks(rung_table, rung_runs)))
    print(format_ladder(result))
    if args.looks:
        from analysis.sequential_replay import replay_published
        from analysis.verdict_cost import format_cost, verdict_cost

        (rows, experiments), _ = replay_published(reference, args.results, args.looks)
        print(f"\n{reference.name}: gem5 CPU-hours per decided verdict, fixed pairs on the "
              f"timing CPU against looks {list(args.looks)} and this rung where it may stand in")
        print(format_cost(verdict_cost(rows, experiments, result)))
    return 0


def _looks(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: allowed: pair counts separated by commas, "
                                         f"e.g. 3,5,10") from None


def cmd_report(args) -> int:
    from analysis.report import build_report
    from reclaimstudy.campaigns.publish import report_published
    from reclaimstudy.campaigns.studies import load_study

    build = report_published if getattr(args, "published", False) else build_report
    written = build(load_study(args.study), args.results)
    console.print(f"report: {written['html']} and {written['markdown']}"
                  + (f" ({written['failed']} failed runs listed)" if written["failed"] else ""))
    return 0


def cmd_publish(args) -> int:
    from reclaimstudy.campaigns.publish import publish
    from reclaimstudy.campaigns.studies import load_study

    if args.restore:
        from reclaimstudy.campaigns.restore import restore, restore_carried, restore_finished
        study = load_study(args.study)
        count = restore(study, args.results)
        console.print(f"restored {count} published run(s) into {args.results / args.study}")
        finished = restore_finished(study, args.results)
        if finished:
            console.print(f"restored {len(finished)} carried finished run(s), not published "
                          f"yet, into {args.results / args.study}")
        for run_id, manifest in restore_carried(study, args.results):
            console.print(f"unpacked {run_id}: {manifest['segments']} saved segments "
                          f"({manifest['cpu_seconds']:,.0f} gem5 CPU-s, packed on "
                          f"{manifest['host']} at {manifest['packed_at']}); a sweep resumes it")
        return 0
    written = publish(load_study(args.study), args.results)
    console.print(f"published: {written['html'].parent.parent} (report {written['html']}; "
                  f"commit the folder)")
    return 0


def cmd_carry(args) -> int:
    """Pack a study's unfinished gem5 runs into its published folder, for the next machine."""
    from reclaimstudy.campaigns.publish import carry_runs
    from reclaimstudy.campaigns.studies import load_study

    study = load_study(args.study)
    outcome = carry_runs(study, args.results, args.min_cpu_s)
    for run_id, m in outcome["packed"]:
        console.print(f"packed {run_id}: {m['segments']} segments, simulated to "
                      f"{m['sim_seconds']:.1f} s, {m['cpu_seconds']:,.0f} gem5 CPU-s, "
                      f"{m['bytes'] / 2**20:.1f} MiB in {len(m['parts'])} part(s), packed in "
                      f"{m['pack_seconds']:.0f} s")
    for run_id, m in outcome["up_to_date"]:
        console.print(f"kept {run_id}: already carried as far ({m['segments']} segments)")
    for run_id, m in outcome["too_short"]:
        console.print(f"not carried {run_id}: {m['cpu_seconds']:,.0f} gem5 CPU-s saved, "
                      f"under --min-cpu-s {args.min_cpu_s:,.0f}")
    for run_id in outcome["dropped"]:
        console.print(f"dropped {run_id}: finished")
    if outcome["finished"]:
        console.print(f"carried {len(outcome['finished'])} finished run(s) not yet published "
                      f"(run.json and table rows): {', '.join(outcome['finished'])}")
    if outcome["packed"] or outcome["dropped"] or outcome["finished"]:
        console.print(f"commit {args.results / 'published' / study.name} (its in-flight/ and "
                      f"sweep log)")
    return 0


def cmd_repeat(args) -> int:
    """Make published runs again in a scratch folder and compare them value for value."""
    from analysis.published import published_table
    from reclaimstudy.backends import get_backend
    from reclaimstudy.campaigns import repeat
    from reclaimstudy.campaigns import runs
    from reclaimstudy.campaigns.studies import load_study
    from reclaimstudy.campaigns.sweep import run_sweep

    study = load_study(args.study).select(args.only)
    backend = resolve_backend(args.backend)
    table = published_table(study, args.results)
    repeat.check_selection(study, get_backend(backend), table)
    if args.scratch.resolve() == args.results.resolve():
        raise StudyError(f"--scratch {args.scratch} is the results root: the runs made again "
                         f"need a folder of their own")
    result = run_sweep(study, backend, args.scratch, jobs=args.jobs,
                       status_every_s=args.status_every)
    if not result.ok:
        raise StudyError(f"{len(result.failed)} run(s) failed when made again: "
                         f"{result.failed[0][0]}: {result.failed[0][1]}")
    found = repeat.compare(study, table, args.scratch)
    for identifier, again in found.items():
        console.print(repeat.describe(identifier, again.moved, again.values, again.newer),
                      highlight=False)
    # a sweep on a build that repeated a run then says so instead of asking for a repeat
    repeat.note_builds(runs.study_dir(study.name, args.results), found)
    return 0 if all(again.moved.empty for again in found.values()) else 1


def cmd_smoke(args) -> int:
    """The main job: the smoke study end to end, then its report."""
    args.study = "smoke"
    status = cmd_sweep(args)
    cmd_report(args)
    return status


def resolve_backend(name: str, showing: bool = False) -> str:
    """'auto' means gem5 when GEM5 is set, else QEMU (saying what that gives up, or, for
    `showing` commands such as status, that the gem5 runs need GEM5 to be found)."""
    if name != "auto":
        return name
    if os.environ.get("GEM5"):
        return "gem5"
    if showing:
        console.print("GEM5 is not set: showing the study's QEMU runs. A gem5 run's id holds "
                      "its simulator's hash, so its runs are found with GEM5 set to that build.")
    else:
        console.print("GEM5 is not set: running on QEMU, which checks function only. Set GEM5 "
                      "to an X86 gem5 v24.0 binary for the study's hardware timing.")
    return "qemu"


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"'{text}': allowed a number of seconds > 0")
    return value


def _sweep_options(p: argparse.ArgumentParser) -> None:
    """The options shared by `sweep` and `smoke` (which is a sweep plus its report)."""
    p.add_argument("--backend", default="auto", help="gem5, qemu, or auto (gem5 when GEM5 is set)")
    p.add_argument("--jobs", "-j", type=int, help="runs at once (default: cores, as memory allows)")
    p.add_argument("--results", type=Path, default=RESULTS, help="results root (default results/)")
    p.add_argument("--timeout", type=float, help="seconds before a run is killed and marked failed")
    p.add_argument("--only", action="append", metavar="PATTERN",
                   help="only the runs named like PATTERN (experiment/policy/system/rN, shell "
                        "wildcards, e.g. 'desktop/baseline/*/r0'); repeatable, and runs go in "
                        "the order of the first pattern they match")
    p.add_argument("--status-every", type=_positive_seconds, default=STATUS_EVERY_S, metavar="S",
                   help=f"say what is running every S seconds (default {STATUS_EVERY_S:.0f})")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="study", description="gem5 full-system study of Linux page-reclaim policies")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("kernel", help="build (or reuse) the patched guest kernel; prints its cache directory")
    p.add_argument("--jobs", "-j", type=int, help="parallel make jobs (default: all cores)")
    p.add_argument("--force", action="store_true", help="rebuild even when a cached build exists")
    p.set_defaults(func=cmd_kernel)

    p = sub.add_parser("gem5", help="build gem5 with gem5-patches/ from a v24.0.0.1 checkout "
                                     "(or reuse the cached build); prints the GEM5 to export")
    p.add_argument("--source", type=Path, required=True,
                   help="a gem5 v24.0.0.1 source checkout (copied, never changed)")
    p.add_argument("--variant", default="opt", help="opt (default) or fast")
    p.add_argument("--jobs", "-j", type=int, help="parallel scons jobs (default: all cores)")
    p.add_argument("--disksim", type=Path,
                   help="a DiskSim checkout (as `disksim --source` takes): build DiskSim and "
                        "link it in, for profiles with [disk.timing] model = \"disksim\"")
    p.add_argument("--simplessd", type=Path,
                   help="a SimpleSSD-Standalone checkout (as `simplessd --source` takes): "
                        "build SimpleSSD and link it in, for profiles with [disk.timing] "
                        "model = \"simplessd\"")
    p.set_defaults(func=cmd_gem5)

    p = sub.add_parser("disksim", help="build DiskSim 4.0 (rotating-disk timing) from a checkout "
                                        "(or reuse the cached build); prints its cache directory")
    p.add_argument("--source", type=Path, required=True,
                   help="a clone of github.com/westerndigitalcorporation/DiskSim, or its "
                        "STABLE/DiskSim_Linux_Generic_2.01.016 tree (copied, never changed)")
    p.set_defaults(func=cmd_disksim)

    p = sub.add_parser("simplessd", help="build SimpleSSD 2.0 (SSD timing) standalone from a "
                                          "checkout (or reuse the cached build); prints its "
                                          "cache directory")
    p.add_argument("--source", type=Path, required=True,
                   help="a clone of github.com/SimpleSSD/SimpleSSD-Standalone with its "
                        "submodules checked out (copied, never changed)")
    p.add_argument("--jobs", "-j", type=int, help="parallel compiles (default: all cores)")
    p.set_defaults(func=cmd_simplessd)

    p = sub.add_parser("image", help="build (or reuse) the guest's root and swap disks for a system")
    p.add_argument("--system", default="desktop-hdd", help="system profile (configs/systems/NAME.toml)")
    p.add_argument("--force", action="store_true", help="rebuild even when a cached image exists")
    p.set_defaults(func=cmd_image)

    p = sub.add_parser("boot", help="gem5: boot a system's memory layout once and checkpoint it "
                                     "(or reuse the cached checkpoint); prints its directory")
    p.add_argument("--system", default="desktop-hdd", help="system profile (configs/systems/NAME.toml)")
    p.set_defaults(func=cmd_boot)

    p = sub.add_parser("run", help="run one point (system, policy, workload) on a backend")
    p.add_argument("--backend", default="qemu", help="qemu (functional) or gem5 (timing)")
    p.add_argument("--system", default="desktop-hdd", help="system profile (configs/systems/NAME.toml)")
    p.add_argument("--policy", default="baseline", help="policy name (configs/policies.toml)")
    p.add_argument("--workload", required=True, help="workload name (workloads/NAME/)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a workload parameter (repeatable)")
    p.add_argument("--repetition", type=int, default=0, help="repetition number (default 0)")
    p.add_argument("--study", default="adhoc", help="results/STUDY/ folder for the run (default adhoc)")
    p.add_argument("--results", type=Path, default=RESULTS, help="results root (default results/)")
    p.add_argument("--timeout", type=float, help="seconds before the run is killed and marked failed")
    p.add_argument("--checkpoint-every", type=_positive_seconds, metavar="S",
                   help="gem5: checkpoint at every phase boundary and every S simulated "
                        "seconds, restoring each, so a killed run resumes (a study sets it "
                        "with checkpoint_every_s)")
    p.add_argument("--job-extra", type=Path, metavar="FILE",
                   help="shell lines the guest runs before the workload, e.g. "
                        "analysis/traces/hot-stream-faults.sh to trace a program's faults "
                        "(part of the run's identity; ad hoc runs only)")
    p.add_argument("--again", action="store_true",
                   help="run it even if this exact run is already done (its directory is "
                        "replaced); without it a finished run is only named")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("sweep", help="run every point of a study, in parallel and resumably, "
                                      "here or as a Slurm job array")
    p.add_argument("study", help="study name (configs/studies/NAME.toml) or a path to one")
    _sweep_options(p)
    p.add_argument("--on", choices=("here", "slurm"), default="here",
                   help="here (default), or slurm: submit a prepare job and a job array of the "
                        "pending runs, and return")
    slurm = p.add_argument_group("with --on slurm")
    slurm.add_argument("--partition", help="sbatch --partition")
    slurm.add_argument("--account", help="sbatch --account")
    slurm.add_argument("--time", help="time limit per run's task, as sbatch --time takes it")
    slurm.add_argument("--mem", type=int, metavar="MIB",
                       help="memory per task in MiB (default: the guest's + the simulator's)")
    slurm.add_argument("--max-running", type=int, metavar="N", help="tasks of the array at once")
    slurm.add_argument("--prepare-time", help="time limit of the prepare job")
    slurm.add_argument("--prepare-cpus", type=int, default=1, metavar="N",
                       help="cores of the prepare job (builds the kernel; default 1)")
    slurm.add_argument("--sbatch", action="append", default=[], metavar="OPTION",
                       help="another sbatch option for both jobs, e.g. --sbatch=--qos=long "
                            "(repeatable)")
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser("status", help="each run of a study: done, failed, queued, running or "
                                       "not run (from its run directories and Slurm)")
    p.add_argument("study", help="study name or path")
    p.add_argument("--backend", default="auto", help="gem5, qemu, or auto (gem5 when GEM5 is set)")
    p.add_argument("--results", type=Path, default=RESULTS, help="results root (default results/)")
    p.set_defaults(func=cmd_status)

    for step, what in (("slurm-prepare", "the prepare job"), ("slurm-task", "one array task")):
        p = sub.add_parser(step, help=f"{what} of `sweep --on slurm` (its batch scripts run it)")
        p.add_argument("ledger", help="the submission's ledger (results/STUDY/.slurm/submissions/)")
        p.set_defaults(func=cmd_slurm_step)

    p = sub.add_parser("compare", help="compare policies across a study's runs (mmtests-style)")
    p.add_argument("study", help="study name or path")
    p.add_argument("--baseline", help="policy to compare against (default: the study's)")
    p.add_argument("--results", type=Path, default=RESULTS, help="results root (default results/)")
    p.add_argument("--export", type=Path, metavar="STEM",
                   help="also write the tidy table as STEM.csv and STEM.parquet")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("pairs", help="one experiment's metrics repetition by repetition, with "
                                     "each policy's paired ratio to the baseline")
    p.add_argument("study", help="study name or path")
    p.add_argument("experiment", help="the experiment (as the table names it)")
    p.add_argument("metrics", nargs="+", metavar="METRIC",
                   help="metric, phase:metric or source:phase:metric (source::metric for "
                        "the whole run; source:*:metric sums a count or a time over the "
                        "run's phases), e.g. pass2:disk_reads or gem5:*:disk_jumps")
    p.add_argument("--baseline", help="policy to pair against (default: the study's)")
    p.add_argument("--system", help="the system, when the experiment ran on more than one")
    p.add_argument("--results", type=Path, default=RESULTS, help="results root (default results/)")
    p.add_argument("--published", action="store_true",
                   help="read the published table (results/published/STUDY/) instead of the runs")
    p.set_defaults(func=cmd_pairs)

    p = sub.add_parser("replay", help="replay a group-sequential rule over a published study's "
                                      "pairs: the runs it would have made, and its verdicts")
    p.add_argument("study", help="study name or path")
    p.add_argument("--looks", type=_looks, help="pairs at each look, e.g. 3,5,10 (default: the "
                                                "study's [verdicts] looks)")
    p.add_argument("--spending", choices=["obrien-fleming", "pocock"],
                   help="alpha spending (default: the study's, else obrien-fleming)")
    p.add_argument("--results", type=Path, default=RESULTS, help="results root (default results/)")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("ladder", help="a cheaper gem5 CPU's paired ratios beside the timing CPU's "
                                      "published ones, and whether it may stand in")
    p.add_argument("study", help="the rung's study (e.g. ladder)")
    p.add_argument("--against", default="seeds-gem5",
                   help="the published timing-CPU study (default seeds-gem5)")
    p.add_argument("--published", action="store_true",
                   help="read the rung's published table instead of its runs")
    p.add_argument("--looks", type=_looks,
                   help="also price the reference study per decided verdict: replayed with "
                        "these looks (e.g. 3,5,10), on this rung where it may stand in")
    p.add_argument("--results", type=Path, default=RESULTS, help="results root (default results/)")
    p.set_defaults(func=cmd_ladder)

    p = sub.add_parser("report", help="write a study's report (Markdown and self-contained HTML)")
    p.add_argument("study", help="study name or path")
    p.add_argument("--results", type=Path, default=RESULTS, help="results root (default results/)")
    p.add_argument("--published", action="store_true",
                   help="rebuild the published report (results/published/STUDY/) from its "
                        "table and run.json files alone")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("publish", help="copy a study's table, run.json files and report into "
                                       "results/published/STUDY/ (to commit; no raw stats)")
    p.add_argument("study", help="study name or path")
    p.add_argument("--results", type=Path, default=RESULTS, help="results root (default results/)")
    p.add_argument("--restore", action="store_true",
                   help="the other way: put the published runs (run.json and their table rows) "
                        "back into results/STUDY/, and unpack the carried runs (`study "
                        "carry`: unfinished ones' segments, finished ones not yet published), "
                        "so a sweep on a new machine goes on from them")
    p.set_defaults(func=cmd_publish)

    p = sub.add_parser("carry", help="pack a study's unfinished gem5 runs (their saved segments) "
                                     "and its finished runs not yet published (run.json and table "
                                     "rows) into results/published/STUDY/in-flight/, so that a new "
                                     "machine goes on from them after `publish STUDY --restore`")
    p.add_argument("study", help="study name or path")
    p.add_argument("--results", type=Path, default=RESULTS, help="results root (default results/)")
    p.add_argument("--min-cpu-s", type=float, default=DEFAULT_MIN_CPU_S, metavar="SECONDS",
                   help="carry only runs with at least this much gem5 CPU time saved (default "
                        f"{DEFAULT_MIN_CPU_S:.0f}: a shorter run is cheaper to redo than to commit)")
    p.set_defaults(func=cmd_carry)

    p = sub.add_parser("repeat", help="make published runs again in a scratch folder and say "
                                      "whether every value repeats (first thing on a new machine)")
    p.add_argument("study", help="study name or path")
    p.add_argument("--only", action="append", required=True, metavar="PATTERN",
                   help="the published runs to make again (experiment/policy/system/rN, shell "
                        "wildcards); repeatable")
    p.add_argument("--scratch", type=Path, required=True,
                   help="results root for the runs made again (not the study's own)")
    p.add_argument("--backend", default="auto", help="gem5, qemu, or auto (gem5 when GEM5 is set)")
    p.add_argument("--jobs", "-j", type=int, help="runs at once (default: cores, as memory allows)")
    p.add_argument("--results", type=Path, default=RESULTS,
                   help="results root holding published/STUDY (default results/)")
    p.add_argument("--status-every", type=_positive_seconds, default=STATUS_EVERY_S, metavar="S",
                   help=f"say what is running every S seconds (default {STATUS_EVERY_S:.0f})")
    p.set_defaults(func=cmd_repeat)

    p = sub.add_parser("smoke", help="the main job: sweep the smoke study and write its report")
    _sweep_options(p)
    p.set_defaults(func=cmd_smoke, on="here")  # its report needs the runs done here
    return parser


def _stop_as_if_interrupted(signum, _frame):
    # `kill`, a closed terminal or a batch system's end of job: stop like Ctrl-C, so the
    # running simulators die with the sweep and its log says how it ended.
    raise KeyboardInterrupt(signal.Signals(signum).name)


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    before = {}
    if threading.current_thread() is threading.main_thread():
        before = {signum: signal.signal(signum, _stop_as_if_interrupted)
                  for signum in (signal.SIGTERM, signal.SIGHUP)}
    try:
        return args.func(args)
    except StudyError as error:
        console.print(Text.assemble(("error: ", "bold red"), str(error)), soft_wrap=True)
        return 2
    except KeyboardInterrupt as stop:
        console.print(f"interrupted{f' ({stop})' if str(stop) else ''}")
        return 130
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


if __name__ == "__main__":
    sys.exit(main())
