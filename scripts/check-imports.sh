#!/usr/bin/env bash
# check-imports.sh: enforce the import rules of docs/architecture.md ("Packages") with go list.
#
# Run from anywhere inside the module; `make check` runs it. Prints one line per violation,
#     <package> -> <forbidden import> (<rule>)
# and exits 1 if there is any. Packages that do not exist yet match no rule and are skipped.
#
# Rule kinds (SUBJECTS and LIST are space-separated; a path without a dot in its first
# element is one of ours, relative to the module root; `*` stands for one path element in
# SUBJECTS and for anything in LIST; every path also covers its subpackages):
#
#   only-ours       production imports of ours: only LIST (or "-" for none). Imports inside
#                   the subject's own tree are always allowed.
#   only-external   production imports outside the standard library and the module: only LIST
#                   (their own dependencies follow from that).
#   never           LIST must not appear among the transitive production dependencies, nor
#                   among the direct test imports (in-package and _test package).
#   never-std       standard-library packages in LIST must not be imported directly by
#                   production code (tests may still use them, e.g. os to read testdata).
#   never-imported  SUBJECTS may be imported only from inside their own tree (production
#                   and test imports).
set -euo pipefail
set -f # the rule table holds glob patterns: never expand them against files

NATS='github.com/nats-io/nats.go github.com/nats-io/nats-server'
RAFT='github.com/hashicorp/raft*'

# kind           | subjects                          | list
RULES="
only-ours        | protocol                          | -
only-external    | protocol                          | github.com/vmihailenco/msgpack/v5
only-ours        | offers coflow framework/altruism  | protocol internal/heapq
never            | offers coflow framework/altruism  | $NATS $RAFT
never-std        | offers coflow framework/altruism  | net os os/*
never            | framework executor                | master offers raftstore natsauth
only-ours        | natsauth                          | protocol
only-ours        | raftstore                         | -
only-ours        | master/state                      | protocol
only-ours        | examples/*                        | framework framework/altruism protocol
only-ours        | offers/scenario                   | offers protocol
only-ours        | sim                               | offers coflow framework/altruism protocol internal/heapq
only-ours        | sim/carbyne                       | offers framework/altruism protocol internal/heapq sim/internal
only-ours        | sim/coflowsim                     | coflow internal/heapq sim/internal
only-ours        | sim/phoenix                       | offers protocol internal/heapq sim/internal
only-ours        | sim/hdrf                          | offers
only-ours        | sim/internal                      | -
only-ours        | natsclient                        | protocol
only-ours        | internal/testlog                  | -
only-ours        | internal/heapq                    | -
only-ours        | internal/sdktest                  | framework protocol internal/testutil
only-ours        | internal/testutil                 | -
only-ours        | master                            | coflow jobs natsauth natsclient offers protocol raftstore
only-ours        | master/api                        | protocol
only-ours        | master/coflowbook                 | coflow protocol
never            | master/coflowbook                 | $NATS $RAFT
only-ours        | framework                         | natsclient protocol internal/heapq
only-ours        | framework/placement               | protocol
never            | framework/placement               | $NATS $RAFT
only-ours        | executor                          | natsclient protocol
only-ours        | jobs                              | protocol
never            | jobs                              | $NATS $RAFT
only-ours        | jobrunner                         | framework jobs natsclient protocol
only-ours        | internal/simagent                 | natsclient protocol
only-ours        | internal/testcluster              | internal executor master natsauth natsclient protocol raftstore
only-ours        | internal/devcluster               | executor master natsauth protocol raftstore
only-ours        | internal/loadgen                  | framework internal/simagent master/api natsclient protocol
only-ours        | internal/coflowbench              | framework internal/devcluster protocol sim/coflowsim
only-ours        | cmd/allot                         | coflow executor framework internal/coflowbench internal/devcluster internal/loadgen jobrunner jobs master natsauth offers protocol sim
only-ours        | integration                       | -
only-ours        | scripts                           | -
never-imported   | cmd/* examples/* integration scripts |
"

cd "$(dirname "$0")/.."
MOD=$(go list -m)

# One line per package: path|imports|deps|test imports|xtest imports.
LISTING=$(go list -e -f \
	'{{.ImportPath}}|{{join .Imports " "}}|{{join .Deps " "}}|{{join .TestImports " "}}|{{join .XTestImports " "}}' \
	./...)

violations=0

trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; s=${s%"${s##*[![:space:]]}"}; printf '%s' "$s"; }

# is_ours IMPORT: true if IMPORT is a package of this module.
is_ours() { [[ $1 == "$MOD" || $1 == "$MOD"/* ]]; }

# is_std IMPORT: true if IMPORT belongs to the standard library (no dot in the first element).
is_std() { local first=${1%%/*}; [[ $first != *.* ]]; }

# rel IMPORT: sets REL to the module-relative path of one of our packages ("." for the root).
rel() { if [[ $1 == "$MOD" ]]; then REL=.; else REL=${1#"$MOD"/}; fi; }

# subject_root PATH SUBJECT: if module-relative PATH falls under SUBJECT, sets ROOT to the
# subject's tree (examples/mpi/x under examples/* gives examples/mpi); fails otherwise.
subject_root() {
	local -a sp rp
	local i
	IFS=/ read -r -a sp <<<"$2"
	IFS=/ read -r -a rp <<<"$1"
	((${#rp[@]} >= ${#sp[@]})) || return 1
	ROOT=""
	for ((i = 0; i < ${#sp[@]}; i++)); do
		# shellcheck disable=SC2053 # glob match on purpose
		[[ ${rp[i]} == ${sp[i]} ]] || return 1
		ROOT+="${ROOT:+/}${rp[i]}"
	done
}

# in_tree PATH ROOT: true if module-relative PATH is ROOT or below it.
in_tree() { [[ $1 == "$2" || $1 == "$2"/* ]]; }

# matches IMPORT PATTERN: true if PATTERN (a glob; ours when its first element has no dot)
# names IMPORT or one of its parents.
matches() {
	local imp=$1 pat=$2
	is_std "$pat" && pat="$MOD/$pat"
	# shellcheck disable=SC2053 # glob match on purpose
	[[ $imp == $pat || $imp == $pat/* ]]
}

report() {
	echo "$1 -> $2 ($3)"
	violations=$((violations + 1))
}

while IFS='|' read -r kind subjects list; do
	kind=$(trim "$kind")
	[[ -z $kind || $kind == \#* ]] && continue
	subjects=$(trim "$subjects")
	list=$(trim "$list")
	rule="$kind ${subjects// /,}${list:+: $list}"
	while IFS='|' read -r pkg imports deps timports ximports; do
		[[ -z $pkg ]] && continue
		is_ours "$pkg" || continue
		rel "$pkg"
		r=$REL
		for subj in $subjects; do
			if [[ $kind == never-imported ]]; then
				# Here the subject is the imported side: check every importer.
				for imp in $imports $timports $ximports; do
					is_ours "$imp" || continue
					rel "$imp"
					if subject_root "$REL" "$subj"; then
						in_tree "$r" "$ROOT" || report "$pkg" "$imp" "$rule"
					fi
				done
				continue
			fi
			subject_root "$r" "$subj" || continue
			root=$ROOT
			case $kind in
			only-ours)
				for imp in $imports; do
					is_ours "$imp" || continue
					rel "$imp"
					in_tree "$REL" "$root" && continue
					ok=0
					for allowed in $list; do
						[[ $allowed == - ]] && continue
						if matches "$imp" "$allowed"; then ok=1; fi
					done
					((ok)) || report "$pkg" "$imp" "$rule"
				done
				;;
			only-external)
				for imp in $imports; do
					is_ours "$imp" && continue
					is_std "$imp" && continue
					ok=0
					for allowed in $list; do
						if matches "$imp" "$allowed"; then ok=1; fi
					done
					((ok)) || report "$pkg" "$imp" "$rule"
				done
				;;
			never)
				for imp in $deps; do
					for bad in $list; do
						if matches "$imp" "$bad"; then report "$pkg" "$imp" "$rule"; fi
					done
				done
				for imp in $timports $ximports; do
					for bad in $list; do
						if matches "$imp" "$bad"; then report "$pkg" "$imp (test)" "$rule"; fi
					done
				done
				;;
			never-std)
				for imp in $imports; do
					is_std "$imp" || continue
					for bad in $list; do
						# shellcheck disable=SC2053 # glob match on purpose
						if [[ $imp == $bad ]]; then report "$pkg" "$imp" "$rule"; fi
					done
				done
				;;
			*)
				echo "check-imports: unknown rule kind: $kind" >&2
				exit 2
				;;
			esac
		done
	done <<<"$LISTING"
done <<<"$RULES"

if ((violations > 0)); then
	echo "check-imports: $violations forbidden import(s)" >&2
	exit 1
fi
echo "check-imports: ok"
