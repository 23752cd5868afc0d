"""A DiskSim drive with another drive's platters: its model file rewritten with a denser
recording, for a derived drive (`[disk.timing.media]`, configs/README.md).

DiskSim takes a drive's zones (cylinders and sectors per track) from its model file, which
its parameter overrides cannot reach. A derived drive that keeps a validated drive's
mechanics but has a later drive's media rate and capacity needs that file changed; this
project holds none of DiskSim's files, so the change is made here, from the user's
DiskSim build, into the cache. The rewrite:

- every zone's sectors per track times one factor, so the outer zone has the later
  drive's count (its media rate at the same rpm), and the zone's track and cylinder skews
  and empty space in sectors by the same factor (the same angles and fractions);
- every zone's cylinders, the drive's cylinder count and the seek curve's distances times
  a second factor, so the drive holds the later drive's sectors: a seek across the same
  fraction of the stroke takes the validated drive's time (the same actuator), a seek of
  one cylinder too (the head's settling, which a denser track pitch does not shorten);
- no slipped or defective sectors (the validated drive's are where its own media had
  them), and the specification's average sectors per cylinder recomputed.

Everything else is the validated drive's. The files keep their names in a folder of
their own, beside links to the rest of the build's valid/ folder, so our parameter file
sources them unchanged when gem5 searches that folder instead.
"""

import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from reclaimstudy.config.systems import DISKSIM_MEDIA_VERSION as VERSION
from reclaimstudy.errors import StudyError
from reclaimstudy.hashing import file_sha256, json_sha256
from reclaimstudy.paths import cache_dir

# DiskSim 4.0's Linux tree counts sectors in a C int.
MAX_SECTORS = (1 << 31) - 1


@dataclass(frozen=True)
class Rewritten:
    model: str
    seek: str
    sectors: int            # the rewritten drive's capacity, as DiskSim will count it
    cylinders: int
    outer_blocks_per_track: int
    track_factor: float     # sectors per track, rewritten / validated
    cylinder_factor: float  # cylinders (and seek distances), rewritten / validated


_ZONE = re.compile(r"dm_layout_g1_zone\s*\{(.*?)\n\s*defects\s*=\s*\[[^\]]*\]\s*\}", re.S)


def _field(body: str, name: str, source: str) -> float:
    match = re.search(re.escape(name) + r"\s*=\s*(-?[0-9.]+)", body)
    if not match:
        raise StudyError(f"{source}: a zone without '{name} = NUMBER'")
    return float(match[1])


def _set(text: str, name: str, value: str) -> str:
    replaced, count = re.subn(r"(" + re.escape(name) + r"\s*=\s*)-?[0-9.]+", r"\g<1>" + value,
                              text, count=1)
    if not count:
        raise StudyError(f"no '{name} = NUMBER' to rewrite")
    return replaced


def rewrite_model(model: str, seek: str, outer_blocks_per_track: int, sectors: int,
                  source: str = "the model file") -> Rewritten:
    """The model file and seek curve of a drive given `outer_blocks_per_track` in its outer
    zone and about `sectors` in all (the module's rules)."""
    if not 0 < sectors <= MAX_SECTORS:
        raise StudyError(f"capacity_sectors = {sectors}: DiskSim counts sectors in a C int, "
                         f"so 1 to {MAX_SECTORS}")
    surfaces = int(_field(model, "Number of data surfaces", source))
    cylinders = int(_field(model, "Number of cylinders", source))
    zones = list(_ZONE.finditer(model))
    if not zones:
        raise StudyError(f"{source}: no dm_layout_g1_zone blocks (a g1 layout is what this "
                         f"rewrite knows)")
    bodies = [z[1] for z in zones]
    per_track = [_field(b, "Blocks per track", source) for b in bodies]
    track_factor = outer_blocks_per_track / max(per_track)
    new_per_track = [round(n * track_factor) for n in per_track]
    spans = [(int(_field(b, "First cylinder number", source)),
              int(_field(b, "Last cylinder number", source))) for b in bodies]
    if any(_field(b, "Number of spares", source) for b in bodies):
        raise StudyError(f"{source}: a zone with spare sectors (how many a rewritten zone "
                         f"would keep is not what this rewrite knows)")
    empty = [_field(b, "Empty space at zone front", source) for b in bodies]
    scaled = [round(e * n / o) for e, n, o in zip(empty, new_per_track, per_track)]
    at_one = sum((last - first + 1) * surfaces * n for (first, last), n in
                 zip(spans, new_per_track)) - sum(scaled)
    # The empty space at a zone's front is sectors, not cylinders: it does not scale.
    cylinder_factor = (sectors + sum(scaled)) / (at_one + sum(scaled))
    if cylinder_factor < 1:
        raise StudyError(f"capacity_sectors = {sectors}: fewer than the drive holds at "
                         f"{outer_blocks_per_track} sectors a track on its own cylinders "
                         f"({at_one}); a rewrite only adds cylinders")
    out, end, total = [], 0, 0
    for zone, (first, last), n, o, e in zip(zones, spans, new_per_track, per_track, scaled):
        body = zone[0]
        new_first = round(first * cylinder_factor)
        new_last = round((last + 1) * cylinder_factor) - 1
        body = _set(body, "First cylinder number", str(new_first))
        body = _set(body, "Last cylinder number", str(new_last))
        body = _set(body, "Blocks per track", str(n))
        body = _set(body, "Empty space at zone front", str(e))
        for skew in ("Skew for track switch", "Skew for cylinder switch"):
            body = _set(body, skew, f"{round(_field(zone[0], skew, source) * n / o):.6f}")
        body = re.sub(r"slips\s*=\s*\[[^\]]*\]", "slips = []", body)
        body = re.sub(r"defects\s*=\s*\[[^\]]*\]", "defects = []", body)
        total += (new_last - new_first + 1) * surfaces * n - e
        out += [model[end:zone.start()], body]
        end = zone.end()
    text = "".join(out) + model[end:]
    new_cylinders = round(cylinders * cylinder_factor)
    text = _set(text, "Number of cylinders", str(new_cylinders))
    text = _set(text, "Block count", str(total))
    if total > MAX_SECTORS:
        raise StudyError(f"capacity_sectors = {sectors}: the rewritten zones hold {total} "
                         f"sectors, over DiskSim's {MAX_SECTORS}")
    return Rewritten(text, rewrite_seek(seek, cylinder_factor, source), total, new_cylinders,
                     outer_blocks_per_track, track_factor, cylinder_factor)


def rewrite_seek(seek: str, factor: float, source: str = "the seek curve") -> str:
    """An extracted seek curve (`Seek distances measured: N`, then `distance, time` lines)
    with its distances times `factor` and its times as written; one cylinder keeps the
    first measured time."""
    points = [(int(d), t) for d, t in re.findall(r"^\s*(\d+)\s*,\s*([0-9.]+)", seek, re.M)]
    if not points or points[0][0] != 1:
        raise StudyError(f"{source}: a seek curve from one cylinder (`1, TIME`) is what this "
                         f"rewrite knows")
    scaled = [(1, points[0][1])] + [(round(d * factor), t) for d, t in points]
    kept: list[tuple[int, str]] = []
    for distance, time in scaled:
        if kept and distance <= kept[-1][0]:
            continue  # a factor near 1 would repeat a distance
        kept.append((distance, time))
    lines = [f"Seek distances measured: {len(kept)}"]
    lines += [f"{distance},\t{time}" for distance, time in kept]
    return "\n".join(lines) + "\n"


def _sourced(text: str, key: str, where: Path) -> str:
    match = re.search(re.escape(key) + r"\s*=\s*(?:source\s+)?([\w.\-]+)", text)
    if not match:
        raise StudyError(f"{where}: no '{key} = ...'")
    return match[1]


def drive_files(valid_dir: Path, parameters: Path) -> tuple[str, str, str]:
    """The specification, model and seek curve files (names in valid/) of the drive our
    parameter file sources."""
    parv = parameters.read_text(errors="replace")
    specs = re.findall(r"^\s*source\s+(\S+\.diskspecs)", parv, re.M)
    if len(specs) != 1:
        raise StudyError(f"{parameters}: sources {len(specs)} .diskspecs files; a derived "
                         f"drive's parameter file sources one")
    model = _sourced((valid_dir / specs[0]).read_text(errors="replace"), "Model",
                     valid_dir / specs[0])
    seek = _sourced((valid_dir / model).read_text(errors="replace"), "Full seek curve",
                    valid_dir / model)
    return specs[0], model, seek


def derived_drive_dir(valid_dir: Path, parameters: Path, outer_blocks_per_track: int,
                      sectors: int) -> Path:
    """A folder for gem5's DiskSim search path: the drive's files rewritten (the module's
    rules), every other file of `valid_dir` linked; made once per inputs, in the cache."""
    specs, model, seek = drive_files(valid_dir, parameters)
    key = json_sha256({"version": VERSION, "outer": outer_blocks_per_track, "sectors": sectors,
                       **{name: file_sha256(valid_dir / name) for name in (specs, model, seek)}})
    final = cache_dir() / "disksim-drives" / key[:16]
    if (final / "derived.json").is_file():
        return final
    rewritten = rewrite_model((valid_dir / model).read_text(), (valid_dir / seek).read_text(),
                              outer_blocks_per_track, sectors, str(valid_dir / model))
    spec_text = (valid_dir / specs).read_text()
    if re.search(r"Avg sectors per cylinder\s*=", spec_text):
        spec_text = _set(spec_text, "Avg sectors per cylinder",
                         str(round(rewritten.sectors / rewritten.cylinders)))
    work = final.with_name(final.name + f".tmp{os.getpid()}")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    for entry in valid_dir.iterdir():
        if entry.name not in (specs, model, seek) and entry.is_file():
            (work / entry.name).symlink_to(entry.resolve())
    (work / specs).write_text(spec_text)
    (work / model).write_text(rewritten.model)
    (work / seek).write_text(rewritten.seek)
    (work / "derived.json").write_text(json.dumps({
        "sectors": rewritten.sectors, "cylinders": rewritten.cylinders,
        "outer_blocks_per_track": outer_blocks_per_track,
        "track_factor": rewritten.track_factor,
        "cylinder_factor": rewritten.cylinder_factor}, indent=1) + "\n")
    try:
        work.rename(final)
    except OSError:  # another process made it first: theirs is the same
        shutil.rmtree(work, ignore_errors=True)
    return final
