# Shared by scripts/run and scripts/test (sourced, not run): Debian packages and the virtualenv.
# shellcheck shell=bash

# The packages of the given groups (venv, window, test) from scripts/debian-packages.txt.
debian_packages() {
  local groups=" $* "
  awk -v groups="$groups" '!/^[[:space:]]*#/ && NF >= 2 && index(groups, " " $2 " ") { print $1 }' \
    "$ROOT/scripts/debian-packages.txt"
}

# Those of the given groups that are not installed (nothing on a system without dpkg).
debian_missing() {
  command -v dpkg-query >/dev/null 2>&1 || return 0
  local wanted installed
  wanted="$(debian_packages "$@")"
  [ -n "$wanted" ] || return 0
  # one dpkg-query for all of them (it is the slow part of a launch); unknown names print nothing
  # shellcheck disable=SC2086
  installed="$(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' $wanted 2>/dev/null | awk '$1 == "ii" { print $2 }')" || true
  grep -vxF -f <(printf '%s\n' "$installed") <<<"$wanted" || true
}

# Install the missing packages of the given groups when root; otherwise print one line naming
# them and the command, and fail.  $WHY says what they are for.
debian_require() {
  local missing
  missing="$(debian_missing "$@" | tr '\n' ' ' | sed 's/ $//')"
  [ -z "$missing" ] && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "== apt-get install $missing" >&2
    apt-get update -qq >/dev/null
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
    return 0
  fi
  echo "session-studio: ${WHY:-this} needs Debian packages that are missing: $missing — install them with: sudo apt-get install -y $missing" >&2
  return 1
}

# Whether $VENV imports Session Studio from $ROOT/src with every requirement (and those of the
# extras "$1") that its installed metadata names.
venv_ready() {
  [ -x "$VENV/bin/python" ] || return 1
  "$VENV/bin/python" - "$ROOT/src" "${1:-}" <<'PY' 2>/dev/null
import importlib.metadata as md, importlib.util, re, sys
src, extras = sys.argv[1], sys.argv[2]
spec = importlib.util.find_spec("session_studio")
assert spec is not None and spec.origin is not None and spec.origin.startswith(src + "/")
for req in md.requires("pi-session-studio") or []:
    extra = re.search(r"""extra\s*==\s*['"]([^'"]+)""", req)
    if extra is None or extra.group(1) == extras:
        md.version(re.split(r"[\s<>=!~;\[(]", req, maxsplit=1)[0])  # raises when not installed
PY
}

# Create or update the virtualenv $VENV with the project (and extras "$1", e.g. "test") installed
# editable from $ROOT, but only when needed: the first time, after pyproject.toml changed, or when
# the venv is broken.  Every later call costs one short Python start and needs no network.
ensure_venv() {
  local extras="${1:-}" spec="." stamp want
  [ -n "$extras" ] && spec=".[$extras]"
  stamp="$VENV/.session-studio-installed${extras:+-$extras}"
  # the C helper is built by the install too: a changed source means installing again
  want="$(cat "$ROOT/pyproject.toml" "$ROOT/setup.py" "$ROOT/src/session_studio/core/_bulkindex.c" | sha256sum | cut -d' ' -f1) $ROOT"
  if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && venv_ready "$extras"; then
    return 0
  fi
  if [ ! -x "$VENV/bin/python" ]; then
    WHY="creating the virtualenv" debian_require venv
    echo "== virtualenv: $VENV" >&2
    "${PYTHON:-python3}" -m venv "$VENV"
  fi
  echo "== pip install -e $spec (once; again only when pyproject.toml, setup.py or the C helper change)" >&2
  rm -f "$VENV"/.session-studio-installed*
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null 2>&1 || true
  if ! (cd "$ROOT" && "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e "$spec"); then
    # no package index (offline) but a complete virtualenv, e.g. one set up by an older script: use it
    venv_ready "$extras" || return 1
    echo "== pip install failed, but $VENV already has Session Studio and its requirements: using it" >&2
    return 0
  fi
  printf '%s' "$want" >"$stamp"
  # the extras include the base install
  [ -n "$extras" ] && printf '%s' "$want" >"$VENV/.session-studio-installed"
  return 0
}
