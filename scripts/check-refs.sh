#!/usr/bin/env bash
# check-refs.sh: comments and docs cite only what the repository holds. Fails, listing each
# offender, on
#   - a section sign (§), which points into notes a clone does not have (cite a published
#     paper by name and section, or a page under docs/);
#   - a path outside the repository (the design notes, spec/*.md) or a numbered issue;
#   - a docs/*.md path or a relative .md link that names no file in the repository, or a
#     section (#anchor) that names no heading of the page it points into.
# bin/, vendor/, testdata/ and .git are not read.
set -euo pipefail

cd "$(dirname "$0")/.."

files=()
while IFS= read -r -d '' f; do
	files+=("${f#./}")
done < <(find . \( -name .git -o -name bin -o -name vendor -o -name testdata \) -prune -o \
	-type f \( -name '*.go' -o -name '*.md' -o -name '*.sh' -o -name Makefile \) -print0 | sort -z)

# anchors prints the section anchors of a Markdown page as a renderer
# makes them from its headings (outside code blocks): lower case, spaces to
# hyphens, other punctuation dropped.
declare -A anchor_cache
anchors() {
	awk '/^```/ { code = !code; next } !code && /^#+ / { sub(/^#+ +/, ""); print }' "$1" |
		tr 'A-Z' 'a-z' | LC_ALL=C sed -E 's/[^a-z0-9 _-]//g; s/ /-/g'
}

# has_anchor reports whether page has a section whose anchor is $2.
has_anchor() {
	if [[ -z ${anchor_cache[$1]+set} ]]; then
		anchor_cache[$1]=$'\n'$(anchors "$1")$'\n'
	fi
	[[ ${anchor_cache[$1]} == *$'\n'"$2"$'\n'* ]]
}

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
	done < <(grep -nE '§|\.\./shared|DESIGN\.md|[Ii]ssue [0-9]+|(^|[^A-Za-z0-9_./-])spec/[A-Za-z0-9_-]+\.md' "$f" || true)

	# docs/NAME.md anywhere, and relative links in Markdown pages.
	dir=$(dirname "$f")
	while IFS=: read -r line ref; do
		path=${ref%%#*}
		if [[ ! -e $path ]]; then
			report "$f:$line: $path does not exist"
		elif [[ $ref == *#* ]] && ! has_anchor "$path" "${ref#*#}"; then
			report "$f:$line: $path has no section #${ref#*#}"
		fi
	done < <(grep -noE 'docs/[A-Za-z0-9_./-]+\.md(#[A-Za-z0-9_-]+)?' "$f" | grep -v '^[0-9]*:\.\./' || true)
	if [[ $f == *.md ]]; then
		while IFS=: read -r line link; do
			target=${link#](}
			target=${target%)}
			anchor=
			[[ $target == *#* ]] && anchor=${target#*#}
			target=${target%%#*}
			[[ $target == http* ]] && continue
			page=$f
			[[ -n $target ]] && page=$dir/$target
			if [[ ! -e $page ]]; then
				report "$f:$line: link $target does not exist"
			elif [[ -n $anchor ]] && ! has_anchor "$page" "$anchor"; then
				report "$f:$line: link ${target:-#}${target:+#}$anchor: no such section"
			fi
		done < <(grep -noE '\]\(([^)#[:space:]]*\.md)?(#[^)[:space:]]*)?\)' "$f" || true)
	fi
done

if ((offenders > 0)); then
	echo "check-refs: $offenders reference(s) to what the repository does not hold" >&2
	exit 1
fi
echo "check-refs: ok"
