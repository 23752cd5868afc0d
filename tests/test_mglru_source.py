"""kernel-patches/README.md's "MGLRU in this kernel" table, held against the kernel source.

Each row of the table says whether an upstream MGLRU fix after 6.1.0 is in our source
(yes, no, or n/a: the code it fixes is not in 6.1). For every row this file names the
code that decides it: a few statements the fix adds, or the ones it replaces, in one
function of one file. The slow test looks for them in Debian's tarball as shipped and again
with our series applied (the kernel the study boots); the quick one checks that the
README's table says what this file checks, and names each function it checks.
"""

import re
import shutil
from pathlib import Path

import pytest

from reclaimstudy.artefacts import kernel as k
from reclaimstudy.paths import KERNEL_PATCHES

VMSCAN, WORKINGSET, INLINE = "mm/vmscan.c", "mm/workingset.c", "include/linux/mm_inline.h"

# (file, function or None for the whole file, code, whether the code is there). Code is
# compared with its whitespace collapsed; " ... " separates pieces that must come in order.
Sign = tuple[str, str | None, str, bool]

# README row (its first upstream id) -> what the README says of it, and the evidence.
FIXES: dict[str, tuple[str, list[Sign]]] = {
    # mm: multi-gen LRU: fix crash during cgroup migration
    "de08eaa61564": ("yes", [
        (VMSCAN, "lru_gen_migrate_mm", "if (!mm->lru_gen.memcg) return;", True)]),
    # mm: multi-gen LRU: rename lrugen->lists[] to lrugen->folios[]
    "6df1b2212950": ("yes", [
        (VMSCAN, "scan_folios", "&lrugen->folios[gen][type][zone];", True),
        (VMSCAN, None, "lrugen->lists[", False)]),
    # Multi-gen LRU: fix per-zone reclaim
    "669281ee7ef7": ("yes", [
        (VMSCAN, "sort_folio", "if (zone > sc->reclaim_idx) {", True),
        (VMSCAN, "scan_folios", "int zone = (sc->reclaim_idx + i) % MAX_NR_ZONES;", True)]),
    # Multi-gen LRU: avoid race in inc_min_seq()
    "bb5e7f234eac": ("yes", [
        (VMSCAN, "inc_max_seq", "if (inc_min_seq(lruvec, type, can_swap)) continue; "
                                "spin_unlock_irq(&lruvec->lru_lock); cond_resched(); "
                                "goto restart;", True)]),
    # Multi-gen LRU: fix can_swap in lru_gen_look_around(): the walk's can_swap is still used
    "a3235ea2a88b": ("no", [
        (VMSCAN, "lru_gen_look_around",
         "get_pfn_folio(pfn, memcg, pgdat, !walk || walk->can_swap);", True)]),
    # Multi-gen LRU: fix workingset accounting: the refault is counted after the
    # same-generation test, and protections are counted as activations
    "3af0191a594d": ("no", [
        (WORKINGSET, "lru_gen_refault",
         "(min_seq & (EVICTION_MASK >> LRU_REFS_WIDTH))) goto unlock; ... "
         "mod_lruvec_state(lruvec, WORKINGSET_REFAULT_BASE + type, delta);", True),
        (VMSCAN, "sort_folio", "WORKINGSET_ACTIVATE_BASE + type, delta);", True),
        (WORKINGSET, "lru_gen_refault", "WORKINGSET_ACTIVATE_BASE", False)]),
    # mm/mglru: fix underprotected page cache: all three hunks
    "081488051d28": ("yes", [
        (INLINE, "lru_gen_add_folio", "seq = lrugen->max_seq - 1;", True),
        (INLINE, "lru_gen_add_folio",
         "else if (reclaiming || lrugen->min_seq[type] + MIN_NR_GENS >= lrugen->max_seq) "
         "seq = lrugen->min_seq[type]; else seq = lrugen->min_seq[type] + 1;", True),
        (VMSCAN, "sort_folio", "if (tier > tier_idx || refs == BIT(LRU_REFS_WIDTH)) {", True),
        (WORKINGSET, "lru_gen_refault",
         "if (lru_gen_in_fault() || refs >= BIT(LRU_REFS_WIDTH) - 1) { "
         "set_mask_bits(&folio->flags, 0, LRU_REFS_MASK | BIT(PG_workingset));", True)]),
    # mm/mglru: skip special VMAs in lru_gen_look_around()
    "c28ac3c7eb94": ("no", [
        (VMSCAN, "lru_gen_look_around", "if (spin_is_contended(pvmw->ptl)) return;", True),
        (VMSCAN, "lru_gen_look_around", "VM_SPECIAL", False)]),
    # mm/mglru: fix div-by-zero in vmpressure_calc_level()
    "8b671fe1a879": ("yes", [
        (VMSCAN, "evict_folios", "list_move(&folio->lru, &clean);", True),
        (VMSCAN, "evict_folios", "sc->nr_scanned -=", False)]),
    # mm/vmscan: wake up flushers conditionally to avoid cgroup OOM
    "1bc542c6a0d1": ("no", [
        (VMSCAN, "shrink_inactive_list", "wakeup_flusher_threads(WB_REASON_VMSCAN);", True),
        (VMSCAN, "evict_folios", "wakeup_flusher_threads", False)]),
    # mm/mglru: reset page lru tier bits when activating
    "f1001f3d3b68": ("no", [
        (INLINE, "lru_gen_add_folio",
         "set_mask_bits(&folio->flags, LRU_GEN_MASK | BIT(PG_active), flags);", True)]),
    # memcg-LRU fixes (v6.7): 6.1 still has its own should_abort_scan()
    "5095a2b23987": ("n/a", [
        (VMSCAN, "should_abort_scan",
         "wmark = current_is_kswapd() ? high_wmark_pages(zone) : low_wmark_pages(zone);", True)]),
    # fixes of functions that came after 6.1
    "30d77b7eef01": ("n/a", [
        (VMSCAN, None, "shrink_one(", False),
        (VMSCAN, None, "set_initial_priority(", False)]),
    # the v6.14 rework: shadows are still stamped with min_seq and must match it exactly
    "b1a71694fb00": ("no", [
        (WORKINGSET, "lru_gen_eviction", "token = (min_seq << LRU_REFS_WIDTH)", True),
        (WORKINGSET, "lru_gen_refault",
         "if ((token >> LRU_REFS_WIDTH) != (min_seq & (EVICTION_MASK >> LRU_REFS_WIDTH))) "
         "goto unlock;", True)]),
}
FILES = sorted({file for _, signs in FIXES.values() for file, *_ in signs})


def collapse(text: str) -> str:
    return " ".join(text.split())


def function_body(text: str, name: str) -> str:
    """The first definition of `name` in a kernel C file (its body, between the braces at
    the start of a line); a declaration or a call (indented) does not match."""
    match = re.search(rf"^(?![ \t])(?:[^\n;{{}}]*\W)?{name}\([^;{{}}]*?\)\n\{{\n(.*?)\n\}}\n",
                      text, re.M | re.S)
    assert match, f"no definition of {name}()"
    return match.group(1)


def holds(text: str, code: str) -> bool:
    """Whether the pieces of `code` (split at " ... ") occur in `text` in that order."""
    text, at = collapse(text), 0
    for piece in code.split(" ... "):
        at = text.find(collapse(piece), at)
        if at < 0:
            return False
    return True


def readme_rows() -> dict[str, tuple[str, str]]:
    """The table of the README's "MGLRU in this kernel": first id -> (state, evidence)."""
    text = (KERNEL_PATCHES / "README.md").read_text()
    section = text.split("\n## MGLRU in this kernel\n", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    id_col, state_col = header.index("id"), header.index("in our source")
    evidence_col = header.index("evidence (file: function)")
    rows = {}
    for line in lines[2:]:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        assert len(cells) == len(header), f"a row of {len(cells)} cells: {line}"
        ids = re.findall(r"\b[0-9a-f]{12}\b", cells[id_col])
        assert ids, f"a row without an upstream id: {line}"
        state = cells[state_col].replace("*", "").split()[0].lower()
        rows[ids[0]] = (state, cells[evidence_col])
    return rows


def test_readme_table_says_what_the_source_checks_find():
    rows = readme_rows()
    assert set(rows) == set(FIXES), (f"README rows without a check here: {set(rows) - set(FIXES)}; "
                                     f"checks without a README row: {set(FIXES) - set(rows)}")
    for fix, (state, signs) in FIXES.items():
        said, evidence = rows[fix]
        assert said == state, f"{fix}: the README says {said!r}, this file checks {state!r}"
        for file, function, _, _ in signs:
            assert f"`{file}`" in evidence, f"{fix}: the README's evidence does not name {file}"
            if function:
                assert f"`{function}()`" in evidence, \
                    f"{fix}: the README's evidence does not name {function}()"


def test_a_sign_is_found_only_in_its_own_function():
    """The checks cannot pass by looking at nothing: a function missing, or code moved
    out of the function it is looked for in, fails them."""
    text = "static int f(int a,\n\t     int b)\n{\n\treturn a;\n}\n\nstatic int\ng(void)\n{\n" \
           "\tif (x) goto out;\n\ty = 1;\n}\n"
    assert holds(function_body(text, "f"), "return a;")
    assert not holds(function_body(text, "g"), "return a;")
    assert holds(function_body(text, "g"), "goto out; ... y = 1;")
    assert not holds(function_body(text, "g"), "y = 1; ... goto out;")
    with pytest.raises(AssertionError, match="no definition of h"):
        function_body(text + "int h(void);\n\tr = h(x);\n", "h")


@pytest.fixture(scope="module")
def trees(tmp_path_factory) -> dict[str, Path]:
    """The files the checks read: Debian's as shipped, and with our series applied."""
    if not k.SOURCE_TARBALL.is_file():
        pytest.skip(f"no kernel source to check: {k.SOURCE_TARBALL} is missing (the "
                    f"{k.SOURCE_PACKAGE} package; ./study installs it)")
    series = k.read_series()
    members = sorted(set(FILES) | set(k.patched_files(series)))
    debian = k.extract_source(tmp_path_factory.mktemp("debian"), members=members)
    ours = tmp_path_factory.mktemp("ours") / "linux-source-6.1"
    shutil.copytree(debian, ours)
    k.apply_series(ours, series, k.installed_source_version())
    return {"debian": debian, "ours": ours}


@pytest.mark.slow
@pytest.mark.parametrize("tree", ["debian", "ours"])
def test_each_fix_is_in_the_source_as_the_readme_says(trees, tree):
    version = k.installed_source_version()
    wrong = []
    for fix, (state, signs) in FIXES.items():
        for file, function, code, expected in signs:
            text = (trees[tree] / file).read_text()
            where = f"{file}: {function}()" if function else file
            if function:
                text = function_body(text, function)
            if holds(text, code) != expected:
                wrong.append(f"{fix} (README: {state}): {where} "
                             f"{'lacks' if expected else 'has'} `{code}`")
    assert not wrong, f"linux-source-6.1 {version} ({tree}):\n" + "\n".join(wrong)
