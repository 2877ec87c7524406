#!/usr/bin/env bash
# Rewrites the generated blocks of docs/*.md from the declarations they come from. A block is
#   <!-- BEGIN GENERATED: wakesim ARGS -->  ...  <!-- END GENERATED -->
# and holds exactly what `wakesim ARGS` prints (tests/test_cli.cpp fails when a block is stale).
# Usage: scripts/gen-docs.sh [path/to/wakesim]   (default: build/wakesim)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/wakesim}
[ -x "$bin" ] || { echo "gen-docs: $bin not found; build first" >&2; exit 2; }
for doc in docs/*.md; do
  grep -q '<!-- BEGIN GENERATED: wakesim ' "$doc" || continue
  tmp=$(mktemp)
  while IFS= read -r line || [ -n "$line" ]; do
    printf '%s\n' "$line" >> "$tmp"
    if [[ $line =~ ^'<!-- BEGIN GENERATED: wakesim '(.*)' -->'$ ]]; then
      read -r -a args <<< "${BASH_REMATCH[1]}"
      # `wakesim validate` exits 1 when a row fails; its table (failing rows shown as such) is
      # still the block's content. Any other failure stops the script.
      rc=0
      "$bin" "${args[@]}" >> "$tmp" || rc=$?
      if [ "$rc" -ne 0 ] && ! { [ "$rc" -eq 1 ] && [ "${args[0]}" = validate ]; }; then
        echo "gen-docs: $doc: wakesim ${args[*]} failed (exit $rc)" >&2; rm -f "$tmp"; exit "$rc"
      fi
      # skip the old block up to its END marker
      while IFS= read -r old; do
        if [[ $old == '<!-- END GENERATED -->' ]]; then printf '%s\n' "$old" >> "$tmp"; break; fi
      done
    fi
  done < "$doc"
  if ! cmp -s "$tmp" "$doc"; then mv "$tmp" "$doc"; echo "updated $doc"; else rm -f "$tmp"; fi
done
