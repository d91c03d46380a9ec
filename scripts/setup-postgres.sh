#!/usr/bin/env bash
# Prepare a local PostgreSQL 15 server with pgvector >= 0.8 on Debian 12 (bookworm).
#
# Idempotent and meant to run as root (CI or a dev VM):
#   1. install the Debian packages that are missing (none on a re-run);
#   2. build and install pgvector from Debian's own source package (taken from
#      trixie, because bookworm does not ship pgvector) unless a pgvector
#      >= MIN_PGVECTOR_VERSION is already installed for PostgreSQL 15;
#   3. start the cluster if it is not running and wait until it accepts connections;
#   4. check that `CREATE EXTENSION vector` works in a scratch database and print its version.
#
# The system's apt sources are never modified: the trixie deb-src entry lives in a
# private apt configuration under WORK_DIR (own sources list, lists dir and cache).
#
# Environment overrides:
#   PG_MAJOR                 (default 15)
#   PG_CLUSTER               (default main)
#   PG_PORT                  (default 5432)
#   MIN_PGVECTOR_VERSION     (default 0.8.0)
#   MEMRAG_PGVECTOR_WORKDIR  (default /var/cache/memrag-pgvector)
#   MEMRAG_PGVECTOR_SUITE    (default trixie)
#   MEMRAG_DEBIAN_MIRROR     (default: the Debian mirror of this machine's apt sources, see
#                            scripts/debian-mirror.sh; needed only to build pgvector)
#   FORCE_PGVECTOR_BUILD=1   rebuild even if a suitable pgvector is installed
set -euo pipefail

# shellcheck source=scripts/debian-mirror.sh
source "$(dirname "${BASH_SOURCE[0]}")/debian-mirror.sh"

PG_MAJOR="${PG_MAJOR:-15}"
PG_CLUSTER="${PG_CLUSTER:-main}"
PG_PORT="${PG_PORT:-5432}"
MIN_PGVECTOR_VERSION="${MIN_PGVECTOR_VERSION:-0.8.0}"
WORK_DIR="${MEMRAG_PGVECTOR_WORKDIR:-/var/cache/memrag-pgvector}"
SUITE="${MEMRAG_PGVECTOR_SUITE:-trixie}"
APT_ETC=/etc/apt
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
PG_CONFIG="/usr/lib/postgresql/${PG_MAJOR}/bin/pg_config"
SCRATCH_DB=memrag_setup_check

export DEBIAN_FRONTEND=noninteractive
APT_QUIET=(-qq -o Dpkg::Use-Pty=0 -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)

START_TS=$(date +%s)
log() { printf '[setup-postgres] %s\n' "$*"; }
die() { printf '[setup-postgres] ERROR: %s\n' "$*" >&2; exit 1; }

[[ $(id -u) -eq 0 ]] || die "must run as root (installs packages and pgvector files)"
command -v dpkg-query >/dev/null || die "this script expects a Debian-based system"

# version_ge A B  -> true if A >= B (Debian version ordering)
version_ge() { dpkg --compare-versions "$1" ge "$2"; }

# ---------------------------------------------------------------------------
# Packages
# ---------------------------------------------------------------------------
APT_UPDATED=0
ensure_packages() {
  local missing=() pkg
  for pkg in "$@"; do
    if [[ $(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true) != installed ]]; then
      missing+=("$pkg")
    fi
  done
  if ((${#missing[@]} == 0)); then
    log "packages present: $*"
    return 0
  fi
  log "installing packages: ${missing[*]}"
  if ((APT_UPDATED == 0)); then
    apt-get "${APT_QUIET[@]}" update
    APT_UPDATED=1
  fi
  apt-get "${APT_QUIET[@]}" install -y --no-install-recommends "${missing[@]}" >/dev/null
}

ensure_packages "postgresql-${PG_MAJOR}" "postgresql-client-${PG_MAJOR}" postgresql-common

[[ -x $PG_CONFIG ]] || die "$PG_CONFIG not found after installing postgresql-${PG_MAJOR}"
PG_SHAREDIR=$("$PG_CONFIG" --sharedir)
PG_PKGLIBDIR=$("$PG_CONFIG" --pkglibdir)

# ---------------------------------------------------------------------------
# pgvector
# ---------------------------------------------------------------------------
installed_pgvector_version() {
  local control="$PG_SHAREDIR/extension/vector.control"
  [[ -f $control && -f $PG_PKGLIBDIR/vector.so ]] || return 0
  sed -n "s/^[[:space:]]*default_version[[:space:]]*=[[:space:]]*'\([^']*\)'.*/\1/p" "$control" | head -n1
}

pgvector_ok() {
  local v
  v=$(installed_pgvector_version)
  [[ -n $v ]] && version_ge "$v" "$MIN_PGVECTOR_VERSION"
}

# The mirror this machine's apt already uses: the source package comes from wherever its binaries do.
resolve_mirror() {
  if [[ -n ${MEMRAG_DEBIAN_MIRROR:-} ]]; then
    printf '%s\n' "$MEMRAG_DEBIAN_MIRROR"
    return 0
  fi
  local codename
  codename=$( (. /etc/os-release && printf '%s' "${VERSION_CODENAME:-}") 2>/dev/null || true)
  [[ -n $codename ]] || die "cannot tell this system's Debian release (no VERSION_CODENAME in /etc/os-release); set MEMRAG_DEBIAN_MIRROR to a Debian mirror URL"
  debian_mirror "$APT_ETC" "$codename" ||
    die "no Debian mirror for $codename in this machine's apt sources ($APT_ETC/sources.list, $APT_ETC/sources.list.d/*.list and *.sources): add the entry apt installs Debian's packages from (a \`deb <mirror> $codename main\` line, or a deb822 stanza with URIs: and Suites: $codename), or set MEMRAG_DEBIAN_MIRROR to a Debian mirror URL"
}

build_pgvector() {
  # Build toolchain + server headers. dpkg-dev provides dpkg-source.
  ensure_packages "postgresql-server-dev-${PG_MAJOR}" build-essential dpkg-dev

  local mirror
  mirror=$(resolve_mirror)
  log "Debian mirror for the $SUITE source package: $mirror"
  local apt_dir="$WORK_DIR/apt" src_dir="$WORK_DIR/src"
  mkdir -p "$apt_dir/sources.list.d" "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
  printf 'deb-src [signed-by=%s] %s %s main\n' "$KEYRING" "$mirror" "$SUITE" >"$apt_dir/sources.list"
  # Private apt configuration: our own sources list, no system source parts, own lists and cache.
  local apt_private=(
    -o "Dir::Etc::SourceList=$apt_dir/sources.list"
    -o "Dir::Etc::SourceParts=$apt_dir/sources.list.d"
    -o "Dir::State::Lists=$apt_dir/lists"
    -o "Dir::Cache=$apt_dir/cache"
  )

  log "fetching pgvector source package index for $SUITE (private apt config in $apt_dir)"
  apt-get "${APT_QUIET[@]}" "${apt_private[@]}" update

  # Fresh download dir each time so a stale older .dsc cannot be picked up.
  rm -rf "$src_dir"
  mkdir -p "$src_dir"
  # Let apt's sandbox user write the download (avoids the "unsandboxed as root" notice).
  if id _apt >/dev/null 2>&1; then chown _apt "$src_dir"; fi
  log "downloading pgvector source package"
  (cd "$src_dir" && apt-get "${APT_QUIET[@]}" "${apt_private[@]}" source --download-only pgvector)

  local dsc
  dsc=$(find "$src_dir" -maxdepth 1 -name 'pgvector_*.dsc' | sort -V | tail -n1)
  [[ -n $dsc ]] || die "apt-get source did not download a pgvector .dsc"
  local debver upstream
  debver=$(sed -n 's/^Version:[[:space:]]*//p' "$dsc" | head -n1)
  upstream=${debver#*:}
  upstream=${upstream%-*}
  log "pgvector source package version $debver"
  version_ge "$upstream" "$MIN_PGVECTOR_VERSION" ||
    die "pgvector $upstream from $SUITE is older than required $MIN_PGVECTOR_VERSION"

  # Extract (applies Debian's patches). Signature check needs debian-keyring, which we don't need:
  # the .dsc was already authenticated through the signed Release/Sources chain by apt.
  (cd "$src_dir" && dpkg-source --no-check -x "$(basename "$dsc")" build >/dev/null)

  log "building pgvector $upstream for PostgreSQL $PG_MAJOR"
  # OPTFLAGS="" as in Debian's package: no -march=native, so the build stays portable
  # (pgvector dispatches SIMD distance functions at run time anyway).
  make -s -C "$src_dir/build" -j"$(nproc)" PG_CONFIG="$PG_CONFIG" OPTFLAGS="" >/dev/null
  make -s -C "$src_dir/build" PG_CONFIG="$PG_CONFIG" OPTFLAGS="" install >/dev/null
  # Keep only the tarballs (small) in the cache dir; drop the build tree.
  rm -rf "$src_dir/build"
}

mkdir -p "$WORK_DIR"
exec 9>"$WORK_DIR/lock"
flock 9 # serialize concurrent runs (CI matrix jobs sharing a machine)

if [[ ${FORCE_PGVECTOR_BUILD:-0} != 1 ]] && pgvector_ok; then
  log "pgvector $(installed_pgvector_version) already installed for PostgreSQL $PG_MAJOR; skipping build"
else
  build_pgvector
  pgvector_ok || die "pgvector install did not produce version >= $MIN_PGVECTOR_VERSION in $PG_SHAREDIR/extension"
  log "installed pgvector $(installed_pgvector_version)"
fi

# ---------------------------------------------------------------------------
# Cluster
# ---------------------------------------------------------------------------
cluster_status() {
  # pg_lsclusters -h: "15 main 5432 online postgres /var/lib/... /var/log/..."
  pg_lsclusters -h 2>/dev/null | awk -v v="$PG_MAJOR" -v c="$PG_CLUSTER" '$1==v && $2==c {print $4}'
}

status=$(cluster_status)
if [[ -z $status ]]; then
  log "no cluster $PG_MAJOR/$PG_CLUSTER; creating it (trust auth on local connections)"
  pg_createcluster "$PG_MAJOR" "$PG_CLUSTER" --port "$PG_PORT" -- --auth=trust >/dev/null
  status=$(cluster_status)
fi
if [[ $status != online* ]]; then
  log "starting cluster $PG_MAJOR/$PG_CLUSTER"
  pg_ctlcluster --skip-systemctl-redirect "$PG_MAJOR" "$PG_CLUSTER" start
else
  log "cluster $PG_MAJOR/$PG_CLUSTER is running"
fi

for _ in $(seq 1 60); do
  if pg_isready -q -h 127.0.0.1 -p "$PG_PORT"; then break; fi
  sleep 0.5
done
pg_isready -h 127.0.0.1 -p "$PG_PORT" >/dev/null || die "PostgreSQL did not become ready on 127.0.0.1:$PG_PORT"

# ---------------------------------------------------------------------------
# Verify
# ---------------------------------------------------------------------------
# Connect over the Unix socket as the postgres OS user (peer or trust auth both work).
psql_pg() { PGOPTIONS="-c client_min_messages=warning" runuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 -p "$PG_PORT" "$@"; }

psql_pg -d postgres -c "DROP DATABASE IF EXISTS $SCRATCH_DB WITH (FORCE)" -c "CREATE DATABASE $SCRATCH_DB"
cleanup_scratch() { psql_pg -d postgres -c "DROP DATABASE IF EXISTS $SCRATCH_DB WITH (FORCE)" >/dev/null 2>&1 || true; }
trap cleanup_scratch EXIT

ext_version=$(psql_pg -d "$SCRATCH_DB" -At <<'SQL'
CREATE EXTENSION IF NOT EXISTS vector;
-- iterative index scans are why we need >= 0.8
SET hnsw.iterative_scan = relaxed_order;
SELECT extversion FROM pg_extension WHERE extname = 'vector';
SQL
)
ext_version=$(tail -n1 <<<"$ext_version")
[[ -n $ext_version ]] || die "CREATE EXTENSION vector did not register the extension"
version_ge "$ext_version" "$MIN_PGVECTOR_VERSION" ||
  die "database reports pgvector $ext_version (< $MIN_PGVECTOR_VERSION)"

cleanup_scratch
trap - EXIT

server_version=$(psql_pg -d postgres -At -c 'SHOW server_version')
log "OK: PostgreSQL $server_version on 127.0.0.1:$PG_PORT, pgvector $ext_version (took $(($(date +%s) - START_TS))s)"
echo "pgvector $ext_version"
