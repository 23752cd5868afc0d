"""Benchmark: how much each published study has added to the repository's history.

A study's growth is the size of every file version ever committed under
results/published/<study>/, as git stores it (`%(objectsize:disk)`: compressed, and
delta-compressed once packed, which is what a clone downloads), counted over the whole
history and since LIGHT_SINCE, the first publish under the rules that keep a clone light
(no self-contained HTML report, the table once, carried segments only for long runs and
dropped once their run finishes). tests/test_repository.py keeps each study's growth
since LIGHT_SINCE under BUDGET_BYTES.

    PYTHONPATH=. .venv/bin/python tests/benchmarks/bench_history_growth.py
"""

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = "results/published"
LIGHT_SINCE = "db6a582edaaa97110771624d9f7a87e1611a238f"
BUDGET_BYTES = 50 * 10**6


def _git(*args: str, stdin: str | None = None, check: bool = True) -> str:
    # safe.directory: a clone owned by another user (CI's chroot) is still read
    return subprocess.run(["git", "-c", f"safe.directory={REPO}", "-C", str(REPO), *args],
                          input=stdin, capture_output=True, text=True, check=check).stdout


def has_full_history() -> str | None:
    """Why the growth cannot be measured here, or None when it can."""
    if not (REPO / ".git").exists():
        return f"{REPO} is not a git checkout"
    if _git("rev-parse", "--is-shallow-repository").strip() == "true":
        return f"{REPO} is a shallow clone: the history is not here to measure"
    if _git("config", "--get", "extensions.partialClone", check=False).strip():
        return f"{REPO} is a partial clone (--filter): old file versions are not here"
    if _git("rev-parse", "--verify", "--quiet", f"{LIGHT_SINCE}^{{commit}}", check=False) == "":
        return f"commit {LIGHT_SINCE[:12]} (LIGHT_SINCE) is not in this clone's history"
    return None


def studies() -> list[str]:
    listed = _git("ls-tree", "-d", "--name-only", f"HEAD:{PUBLISHED}")
    return sorted(name for name in listed.split() if name)


def growth(study: str, since: str | None = None) -> tuple[int, int]:
    """(file versions, bytes as stored) committed under the study's published folder,
    in every commit of HEAD's history, or in those after `since` (versions `since`
    already had are not counted again)."""
    revisions = ["HEAD"] if since is None else [f"{since}..HEAD"]
    objects = _git("rev-list", "--objects", *revisions, "--", f"{PUBLISHED}/{study}")
    ids = "\n".join(line.split()[0] for line in objects.splitlines() if " " in line)
    sized = _git("cat-file", "--batch-check=%(objecttype) %(objectsize:disk)", stdin=ids + "\n")
    blobs = [int(size) for kind, size in (line.split() for line in sized.splitlines())
             if kind == "blob"]
    return len(blobs), sum(blobs)


def main() -> None:
    why = has_full_history()
    if why:
        raise SystemExit(why)
    print(f"| study | file versions, all history | MB | since {LIGHT_SINCE[:7]} | MB |")
    print("|---|---|---|---|---|")
    for study in studies():
        (n_all, all_bytes), (n_new, new_bytes) = growth(study), growth(study, LIGHT_SINCE)
        print(f"| {study} | {n_all:,} | {all_bytes / 1e6:.1f} | {n_new:,} | {new_bytes / 1e6:.2f} |")


if __name__ == "__main__":
    main()
