#!/usr/bin/env bash
# demo.sh: start a local cluster with `allot dev` (three masters, three agents, an embedded NATS
# server, all on free ports under a fresh data directory), run the MapReduce and MPI examples
# against it to a verified result (and check that the shuffles ran as coflows), and stop the
# cluster. `make demo` builds the binaries into bin/ and runs it. Exits non-zero if the cluster
# does not come up or an example fails.
#
# The agents pretend to have 2 CPUs and 4 GiB each, whatever this machine has, so the examples'
# task sizes fit on a small machine (allot dev --agent-resources).
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/devcluster.sh
source scripts/devcluster.sh
work=$(mktemp -d "${TMPDIR:-/tmp}/allot-demo-XXXXXX")

cleanup() {
	local code=$?
	stop_dev_cluster
	if ((code != 0)); then
		echo "demo failed (exit $code); the cluster's output and logs are in $work" >&2
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

echo "==> starting a local cluster: allot dev --data-dir $work/cluster"
start_dev_cluster "$work" --agent-resources cpus=2000,mem=4096
nats=$ALLOT_NATS

echo
echo "==> MapReduce: word counts and sorts as altruistic DAG jobs in two roles"
bin/mapreduce run --nats "$nats" --quiet --verify

echo
echo "==> the shuffles, ordered by the agents as Philae coflows: allot coflows list"
masters=$ALLOT_MASTERS
bin/allot coflows list --masters "$masters" | tail -n 1
completed=$(bin/allot coflows list --masters "$masters" --json | awk -F': ' '/"completed"/ { print $2 + 0 }')
if ((completed == 0)); then
	echo "no shuffle completed as a coflow" >&2
	exit 1
fi

echo
echo "==> MPI: a gang of 3 ranks, one per agent: ring allreduce and pi"
bin/mpi run --nats "$nats" --ranks 3 --placement spread

echo
echo "==> stopping the cluster"
stop_dev_cluster
echo "demo finished: every result verified"
