#!/usr/bin/env bash
# bench-jobs.sh: how long the job runner takes to bring a service of N instances (default 1,000)
# to N RUNNING on a local cluster. It starts `allot dev` (three masters, four agents that pretend
# to have 64 CPUs and 64 GiB each, whatever this machine has), runs `allot jobs serve` with its
# shipped defaults, submits a service of N instances of `sleep` (0.1 CPU, 16 MiB each), and prints
# the seconds from submission until the leader's state shows N tasks RUNNING, then stops it all.
# `make bench-jobs` runs it; `N=200 make bench-jobs` a smaller one.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${N:-1000}

work=$(mktemp -d "${TMPDIR:-/tmp}/allot-bench-jobs-XXXXXX")
pids=()
cleanup() {
	local code=$?
	for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	if ((code != 0)); then
		echo "bench-jobs failed (exit $code); output and logs are in $work" >&2
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

bin/allot dev --data-dir "$work/cluster" --agents 4 --nats-port 0 --http-port 0 --raft-port 0 \
	--agent-resources cpus=64000,mem=65536 --log-level warn >"$work/dev.out" 2>"$work/dev.log" &
pids+=($!)
for _ in $(seq 1 600); do
	grep -q '^ *export ALLOT_SECRET=' "$work/dev.out" && break
	sleep 0.1
done
eval "$(awk '$1 == "export"' "$work/dev.out")"

bin/allot jobs serve --log-level warn 2>"$work/runner.log" &
pids+=($!)

cat >"$work/bench.hcl" <<HCL
job "bench" {
  group "g" {
    count = $n
    task "t" {
      command = "sleep"
      args    = ["3600"]
      resources {
        cpus = 0.1
        mem  = "16M"
      }
    }
  }
}
HCL

start=$(date +%s.%N)
bin/allot jobs run "$work/bench.hcl" >/dev/null
running=0
for _ in $(seq 1 1200); do
	running=$(bin/allot tasks list 2>/dev/null | awk '$2 ~ /^bench\./ && $4 == "RUNNING"' | wc -l)
	((running >= n)) && break
	sleep 0.1
done
end=$(date +%s.%N)
if ((running < n)); then
	echo "only $running of $n instances running after 120 s" >&2
	exit 1
fi
awk -v s="$start" -v e="$end" -v n="$n" 'BEGIN { printf "%d instances RUNNING %.1f s after submission\n", n, e - s }'

# allot dev leaves its agents' tasks running when it stops (a restart resumes them): stop the job
# and wait for its tasks to end first.
bin/allot jobs stop bench >/dev/null
for _ in $(seq 1 600); do
	live=$(bin/allot tasks list 2>/dev/null | awk '$2 ~ /^bench\./ && ($4 == "RUNNING" || $4 == "STARTING" || $4 == "STAGING" || $4 == "KILLING")' | wc -l)
	((live == 0)) && break
	sleep 0.1
done
