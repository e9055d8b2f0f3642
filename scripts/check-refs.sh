#!/usr/bin/env bash
# check-refs.sh: comments and docs cite only what the repository holds. Fails, listing each
# offender, on
#   - a section sign (§), which points into notes a clone does not have (cite a published
#     paper by name and section, or a page under docs/);
#   - a path outside the repository (the design notes) or a numbered issue;
#   - a docs/*.md path or a relative .md link that names no file in the repository.
# bin/, vendor/, testdata/ and .git are not read.
set -euo pipefail

cd "$(dirname "$0")/.."

files=()
while IFS= read -r -d '' f; do
	files+=("${f#./}")
done < <(find . \( -name .git -o -name bin -o -name vendor -o -name testdata \) -prune -o \
	-type f \( -name '*.go' -o -name '*.md' -o -name '*.sh' -o -name Makefile \) -print0 | sort -z)

offenders=0
report() {
	echo "$1"
	offenders=$((offenders + 1))
}

self=scripts/check-refs.sh
for f in "${files[@]}"; do
	[[ $f == "$self" ]] && continue
	while IFS= read -r hit; do
		report "$f:$hit"
	done < <(grep -nE '§|\.\./shared|DESIGN\.md|[Ii]ssue [0-9]+' "$f" || true)

	# docs/NAME.md anywhere, and relative links in Markdown pages.
	dir=$(dirname "$f")
	while IFS=: read -r line ref; do
		[[ -e $ref ]] || report "$f:$line: $ref does not exist"
	done < <(grep -noE 'docs/[A-Za-z0-9_./-]+\.md' "$f" || true)
	if [[ $f == *.md ]]; then
		while IFS=: read -r line link; do
			target=${link#](}
			target=${target%)}
			target=${target%%#*}
			[[ -z $target || $target == http* ]] && continue
			[[ -e $dir/$target ]] || report "$f:$line: link $target does not exist"
		done < <(grep -noE '\]\([^)#[:space:]]*\.md(#[^)]*)?\)' "$f" || true)
	fi
done

if ((offenders > 0)); then
	echo "check-refs: $offenders reference(s) to what the repository does not hold" >&2
	exit 1
fi
echo "check-refs: ok"
