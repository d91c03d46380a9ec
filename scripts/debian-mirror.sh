# shellcheck shell=bash
# The Debian mirror this machine's apt already uses, for scripts/setup-postgres.sh (sourced).
#
#   debian_mirror APT_ETC_DIR CODENAME
#
# prints the URI of the first Debian archive entry in APT_ETC_DIR's sources (`sources.list`,
# `sources.list.d/*.list`: one-line `deb`/`deb-src` entries; `sources.list.d/*.sources`: deb822
# stanzas with `Types:`, `URIs:`, `Suites:`), and fails (printing nothing) when there is none.
# An archive entry is one for CODENAME itself (`bookworm`), else for its `-updates` or
# `-backports` suite: that leaves out the security archive and third-party repositories
# (`bookworm-security`, `bookworm-pgdg`, `nodistro`), which serve no other release. Disabled
# stanzas (`Enabled: no`), comments and files apt ignores (other extensions) are skipped.

# "URI SUITE" per enabled deb/deb-src entry, in the order apt reads the files.
apt_source_entries() {
  local dir=$1 file
  for file in "$dir/sources.list" "$dir"/sources.list.d/*.list; do
    [[ -f $file ]] || continue
    # deb [ opt=value ... ] URI SUITE [COMPONENT...]   (options may hold spaces inside the brackets)
    sed -e 's/#.*//' -e 's/\[[^]]*\]//' "$file" | awk '$1 == "deb" || $1 == "deb-src" { if (NF >= 3) print $2, $3 }'
  done
  for file in "$dir"/sources.list.d/*.sources; do
    [[ -f $file ]] || continue
    awk '
      function flush(   i, j, nu, ns, u, s, types) {
        types = " " tolower(fields["types"]) " "
        if ((types ~ / deb / || types ~ / deb-src /) && tolower(fields["enabled"]) != "no") {
          nu = split(fields["uris"], u, /[ \t]+/); ns = split(fields["suites"], s, /[ \t]+/)
          for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++) if (u[i] != "" && s[j] != "") print u[i], s[j]
        }
        delete fields; last = ""
      }
      /^[ \t]*#/ { next }
      /^[ \t]*$/ { flush(); next }
      # A continuation line (a multi-line Signed-By key, say) belongs to the field before it.
      /^[ \t]/ { if (last != "") fields[last] = fields[last] " " $0; next }
      {
        colon = index($0, ":")
        if (colon == 0) next
        last = tolower(substr($0, 1, colon - 1))
        value = substr($0, colon + 1)
        gsub(/^[ \t]+|[ \t]+$/, "", value)
        fields[last] = value
      }
      END { flush() }
    ' "$file"
  done
}

debian_mirror() {
  local dir=$1 codename=$2 entries suite uri
  [[ -n $codename ]] || return 1
  entries=$(apt_source_entries "$dir")
  for suite in "$codename" "$codename-updates" "$codename-backports"; do
    uri=$(awk -v s="$suite" '$2 == s { print $1; exit }' <<<"$entries")
    if [[ -n $uri ]]; then
      printf '%s\n' "${uri%/}"
      return 0
    fi
  done
  return 1
}
