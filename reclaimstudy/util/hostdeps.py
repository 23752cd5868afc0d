"""Host tools and Debian packages, from the project's one list (packaging/host-tools.txt).

The bootstrap installs that list's packages; the messages here name the package
of a missing tool from the same list, so the two cannot drift apart.
"""

import functools
import shutil
import subprocess
from dataclasses import dataclass

from reclaimstudy.errors import StudyError
from reclaimstudy.paths import REPO

HOST_TOOLS = REPO / "packaging" / "host-tools.txt"
SETUP_HINT = "(./study installs every Debian package the project needs when run as root)"


@dataclass(frozen=True)
class HostNeed:
    """One row of the list: a command (None for a package needed for its files), its package."""
    command: str | None
    package: str
    used_by: str


@functools.cache
def host_needs() -> tuple[HostNeed, ...]:
    needs = []
    for number, line in enumerate(HOST_TOOLS.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split(None, 2)
        if len(fields) < 3:
            raise StudyError(f"{HOST_TOOLS}:{number}: '{line}' needs three columns: "
                             f"command (or -), Debian package, what uses it")
        command, package, used_by = fields
        needs.append(HostNeed(None if command == "-" else command, package, used_by))
    return tuple(needs)


def debian_packages() -> list[str]:
    """Every package of the list, once each, in its order."""
    return list(dict.fromkeys(need.package for need in host_needs()))


def package_of(tool: str) -> str:
    """The Debian package that provides `tool`; a tool the list lacks is the project's bug."""
    for need in host_needs():
        if need.command == tool:
            return need.package
    raise StudyError(f"the project calls '{tool}' but {HOST_TOOLS} does not list it: add a "
                     f"line with its Debian package, so that ./study installs it")


def require_tool(tool: str) -> str:
    """Path of `tool`, or a StudyError naming the Debian package that provides it."""
    package = package_of(tool)
    path = shutil.which(tool)
    if path is None:
        raise StudyError(
            f"missing host tool '{tool}': install it with `apt-get install {package}` {SETUP_HINT}"
        )
    return path


def debian_package_version(package: str) -> str | None:
    """Installed version of a Debian package, or None when it is not installed."""
    if shutil.which("dpkg-query") is None:
        return None
    result = subprocess.run(
        ["dpkg-query", "-W", "-f", "${Status}\t${Version}", package],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        return None
    status, _, version = result.stdout.partition("\t")
    return version if status.endswith(" installed") else None


def debian_package_versions() -> dict[str, str | None]:
    """Installed version of every package of the list (None: not installed), for run.json."""
    if shutil.which("dpkg-query") is None:
        return {}
    result = subprocess.run(
        ["dpkg-query", "-W", "-f", "${Package}\t${Status}\t${Version}\n", *debian_packages()],
        capture_output=True, text=True)
    versions = dict.fromkeys(debian_packages())
    for line in result.stdout.splitlines():
        package, status, version = line.split("\t")
        if status.endswith(" installed"):
            versions[package.split(":")[0]] = version
    return versions
