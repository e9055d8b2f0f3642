#!/usr/bin/env bash
# mapreduce-bench.sh: the MapReduce example's job time on 90 MB beside a single-process baseline
# on the same machine. `make bench-mapreduce` builds the binaries and runs it.
#
# On a local cluster with its defaults (`allot dev`: three agents sharing this machine), a
# generated corpus of SIZE (default 90MB) written to files (`mapreduce gen`), each job run RUNS
# times (default 5), and the median printed:
#   - word count: `mapreduce run --input DIR` with the default flags, and with FLAGS_WC;
#     baseline `cat DIR/* | tr -s ' ' '\n' | sort | uniq -c` (the corpus is lowercase words
#     separated by single spaces, so this counts the same words);
#   - sort: `mapreduce run --input DIR --sort` with the default flags, and with FLAGS_SORT;
#     baseline GNU `sort DIR/*`.
# The job time is the job's completion time (JCT: from its submission to its last reducer's
# end, as the report gives it); the command's wall time, which adds starting the framework, is
# printed beside it.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/devcluster.sh
source scripts/devcluster.sh

size=${SIZE:-90MB}
runs=${RUNS:-5}
flags_wc=${FLAGS_WC:---split-size 16MB}
flags_sort=${FLAGS_SORT:---split-size 31MB --mem 256 --cpus 666 --reducers 3}
work=$(mktemp -d "${TMPDIR:-/tmp}/allot-mapreduce-bench-XXXXXX")
cleanup() {
	stop_dev_cluster
	rm -rf "$work"
}
trap cleanup EXIT

start_dev_cluster "$work" >/dev/null
bin/mapreduce gen --kind wordcount --size "$size" --out "$work/text" --file-size 16MB
bin/mapreduce gen --kind sort --size "$size" --out "$work/records" --file-size 16MB

median() { sort -g | awk '{ v[NR] = $1 } END { printf "%.3f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
seconds() { awk -v s="$1" -v e="$2" 'BEGIN { printf "%.3f\n", e - s }'; }

# baseline NAME COMMAND: the command's median wall time over $runs runs.
baseline() {
	local name=$1 cmd=$2 times=()
	for _ in $(seq 1 "$runs"); do
		local s e
		s=$(date +%s.%N)
		sh -c "$cmd" >/dev/null
		e=$(date +%s.%N)
		times+=("$(seconds "$s" "$e")")
	done
	printf '%-44s median %s s (runs: %s)\n' "$name" "$(printf '%s\n' "${times[@]}" | median)" "${times[*]}"
}

# cluster NAME FLAGS...: the job's median JCT, and the command's median wall time.
cluster() {
	local name=$1 jcts=() walls=()
	shift
	for i in $(seq 1 "$runs"); do
		local s e
		s=$(date +%s.%N)
		bin/mapreduce run --quiet --json "$work/run.json" "$@" >"$work/run.out"
		e=$(date +%s.%N)
		walls+=("$(seconds "$s" "$e")")
		jcts+=("$(awk -F': ' '/"jct_seconds"/ { printf "%.3f", $2 + 0 }' "$work/run.json")")
	done
	printf '%-44s median JCT %s s (runs: %s); command %s s\n' "$name" "$(printf '%s\n' "${jcts[@]}" | median)" \
		"${jcts[*]}" "$(printf '%s\n' "${walls[@]}" | median)"
	grep -E '^job |^  (map|reduce):' "$work/run.out" | sed 's/^/    last run: /'
}

echo "mapreduce-bench: $size, $runs runs each, on allot dev's defaults ($(nproc) cores)"
baseline "word count: cat | tr | sort | uniq -c" "cat $work/text/* | tr -s ' ' '\n' | sort | uniq -c"
cluster "word count: mapreduce, default flags" --input "$work/text"
# shellcheck disable=SC2086
cluster "word count: mapreduce $flags_wc" --input "$work/text" $flags_wc
baseline "sort: GNU sort" "sort $work/records/*"
cluster "sort: mapreduce, default flags" --input "$work/records" --sort
# shellcheck disable=SC2086
cluster "sort: mapreduce $flags_sort" --input "$work/records" --sort $flags_sort
