"""Checks for host tools and Debian packages, with messages that say how to install them."""

import shutil
import subprocess

from reclaimstudy.errors import StudyError

SETUP_HINT = "(./study installs every Debian package the project needs when run as root)"


def require_tool(tool: str, package: str) -> str:
    """Path of `tool`, or a StudyError naming the Debian package that provides it."""
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
