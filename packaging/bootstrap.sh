#!/usr/bin/env bash
# Installs what the project needs on this machine, once: missing Debian packages
# (apt-get, as root) and a Python virtual environment in .venv. Cheap when nothing
# changed: a stamp keyed by the package lists skips all of it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
packages_file="$root/packaging/debian-packages.txt"
stamp_key=$(cat "$packages_file" "$root/pyproject.toml" | sha256sum | cut -c1-16)
stamp="$venv/.bootstrapped-$stamp_key"
[ -f "$stamp" ] && exit 0

mapfile -t packages < <(grep -v '^\s*#' "$packages_file" | grep -v '^\s*$')
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f '${Status}' "$package" 2>/dev/null | grep -q ' installed$' || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "study: missing Debian packages: ${missing[*]}" >&2
    echo "study: install them with: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
  echo "study: installing Debian packages: ${missing[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

if [ ! -x "$venv/bin/python" ]; then
  echo "study: creating the Python environment in $venv" >&2
  python3 -m venv "$venv"
fi
echo "study: installing Python packages (pyproject.toml)" >&2
"$venv/bin/python" -m pip install -q --disable-pip-version-check -e "$root" >&2
rm -f "$venv"/.bootstrapped-*
touch "$stamp"
