#!/usr/bin/env bash
# Installs what the project needs on this machine, once: the Debian packages of
# packaging/host-tools.txt (apt-get, as root, missing ones only) and a Python
# virtual environment in .venv with the exact versions of packaging/requirements.lock
# (hash-checked). Cheap when nothing changed: a stamp keyed by those files skips all of it.
# `bootstrap.sh --list-packages` prints the Debian packages it would install;
# `--missing`, those this machine lacks (as apt-get install would be given them).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
tools_file="$root/packaging/host-tools.txt"
lock_file="$root/packaging/requirements.lock"
# The second column of every row that is not a comment, once each.
mapfile -t packages < <(awk '!/^[[:space:]]*(#|$)/ && !seen[$2]++ { print $2 }' "$tools_file")
if [ "${1:-}" = "--list-packages" ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi
# The kernel source the patch series was made against, installed at that version: a later
# Debian revision is another kernel (other run ids), so a study carried on on a new
# machine would start over.
series_file="$root/kernel-patches/series"
read -r pinned pinned_version < <(awk '$1 == "#" && $2 == "made-against:" { print $3, $4 }' "$series_file")
stamp_key=$(cat "$tools_file" "$lock_file" "$root/pyproject.toml" "$series_file" "$root/packaging/bootstrap.sh" | sha256sum | cut -c1-16)
stamp="$venv/.bootstrapped-$stamp_key"
# Checked every time, stamp or not: an `apt upgrade` may have replaced the pinned source.
pinned_installed=$(dpkg-query -W -f '${Version}' "$pinned" 2>/dev/null || true)
[ -f "$stamp" ] && [ "$pinned_installed" = "$pinned_version" ] && [ "${1:-}" != "--missing" ] && exit 0

missing=()
for package in "${packages[@]}"; do
  if [ "$package" = "$pinned" ]; then
    [ "$(dpkg-query -W -f '${Version}' "$package" 2>/dev/null)" = "$pinned_version" ] ||
      missing+=("$package=$pinned_version")
  else
    dpkg-query -W -f '${Status}' "$package" 2>/dev/null | grep -q ' installed$' || missing+=("$package")
  fi
done
if [ "${1:-}" = "--missing" ]; then
  [ ${#missing[@]} -eq 0 ] || printf '%s\n' "${missing[@]}"
  exit 0
fi
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "study: missing Debian packages: ${missing[*]}" >&2
    echo "study: install them with: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
  echo "study: installing Debian packages: ${missing[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends --allow-downgrades --allow-change-held-packages \
    "${missing[@]}" >&2
fi
# Held, so that an upgrade (bookworm-security carries newer ones) leaves the study's kernel.
if [ "$(id -u)" -eq 0 ] && ! apt-mark showhold | grep -qx "$pinned"; then
  echo "study: holding $pinned at $pinned_version, the version kernel-patches/series was made against (apt-mark unhold $pinned releases it)" >&2
  apt-mark hold "$pinned" >/dev/null
fi

# Debian's interpreter (the python3 package above), whatever else is first on PATH.
if [ ! -x "$venv/bin/python" ]; then
  echo "study: creating the Python environment in $venv" >&2
  /usr/bin/python3 -m venv "$venv"
fi
echo "study: installing Python packages ($(grep -c '^[a-z]' "$lock_file") pinned in packaging/requirements.lock)" >&2
# Only the lock: the project itself runs from the work tree (./study puts it on
# PYTHONPATH), so nothing unpinned is fetched to build it.
"$venv/bin/python" -m pip install -q --disable-pip-version-check --require-hashes --no-deps \
  -r "$lock_file" >&2
rm -f "$venv"/.bootstrapped-*
touch "$stamp"
