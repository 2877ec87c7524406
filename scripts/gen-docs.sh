#!/usr/bin/env bash
# Regenerates the tables in docs/*.md that come from declarations in the code. Each one sits
# between two marker lines, the first naming the wakesim command that prints it:
#
#   <!-- generated: wakesim list workloads --markdown pipe -->
#   ...replaced by the command's output...
#   <!-- end generated -->
#
# Usage: scripts/gen-docs.sh [--check] [BINARY]   (BINARY defaults to build/wakesim)
#   --check  change nothing; exit 1 and name the files whose generated text is out of date.
set -euo pipefail
cd "$(dirname "$0")/.."

check=0
if [[ "${1:-}" == "--check" ]]; then
    check=1
    shift
fi
bin="${1:-build/wakesim}"
if [[ ! -x "$bin" ]]; then
    echo "gen-docs: $bin is not built (cmake --build build --target wakesim)" >&2
    exit 2
fi

begin_re='^<!-- generated: wakesim (.*) -->$'
end_line='<!-- end generated -->'
stale=0
for doc in docs/*.md; do
    grep -q '^<!-- generated: wakesim ' "$doc" || continue
    out="$(mktemp)"
    in_block=0
    while IFS= read -r line || [[ -n "$line" ]]; do
        if [[ $in_block == 1 ]]; then
            if [[ "$line" == "$end_line" ]]; then
                printf '%s\n' "$line" >>"$out"
                in_block=0
            fi
            continue
        fi
        printf '%s\n' "$line" >>"$out"
        if [[ "$line" =~ $begin_re ]]; then
            read -ra args <<<"${BASH_REMATCH[1]}"
            "$bin" "${args[@]}" >>"$out"
            in_block=1
        fi
    done <"$doc"
    if [[ $in_block == 1 ]]; then
        echo "gen-docs: $doc: a generated block has no \"$end_line\" line" >&2
        rm -f "$out"
        exit 2
    fi
    if cmp -s "$out" "$doc"; then
        rm -f "$out"
    elif [[ $check == 1 ]]; then
        echo "gen-docs: $doc is out of date; run scripts/gen-docs.sh" >&2
        stale=1
        rm -f "$out"
    else
        cat "$out" >"$doc"  # keeps the file's mode
        rm -f "$out"
        echo "gen-docs: updated $doc"
    fi
done
exit $stale
