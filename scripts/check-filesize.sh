#!/usr/bin/env bash
# check-filesize.sh: keep files and functions small (house style: one concept per file, files
# short, a function says one thing). Fails if a .go file has more than MAX_LINES lines (a _test.go
# file more than MAX_TEST_LINES) or a function more than MAX_FUNC_LINES (scripts/funclen), and
# lists every offender. testdata/, bin/ and vendor/ are not checked.
set -euo pipefail

MAX_LINES=${MAX_LINES:-400}
MAX_TEST_LINES=${MAX_TEST_LINES:-400}
MAX_FUNC_LINES=${MAX_FUNC_LINES:-100}

cd "$(dirname "$0")/.."

offenders=0
while IFS= read -r -d '' f; do
	f=${f#./}
	lines=$(wc -l <"$f")
	limit=$MAX_LINES
	[[ $f == *_test.go ]] && limit=$MAX_TEST_LINES
	if ((lines > limit)); then
		echo "$f: $lines lines (limit $limit)"
		offenders=$((offenders + 1))
	fi
done < <(find . \( -name .git -o -name bin -o -name vendor -o -name testdata \) -prune -o \
	-type f -name '*.go' -print0 | sort -z)

if ((offenders > 0)); then
	echo "check-filesize: $offenders file(s) over the limit; split them by concept" >&2
	exit 1
fi
go run ./scripts/funclen -max "$MAX_FUNC_LINES" .
echo "check-filesize: ok"
