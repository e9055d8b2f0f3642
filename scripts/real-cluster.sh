#!/usr/bin/env bash
# real-cluster.sh: the README's "Running a real cluster" recipe on one machine, as separate
# processes: three `allot master` (Raft over TCP, data on disk, embedded NATS servers routed into
# one cluster, credentials for frameworks and agents, an operator token, a files secret) and
# three `allot agent`, each with its own credential, hostname, HTTP address and port range.
# It waits for every master to be ready (/readyz), runs the MapReduce and MPI examples against
# the cluster to verified results, checks what `allot status` reports, and stops everything.
# `make real-cluster` builds the binaries into bin/ and runs it; CI runs it too. On three
# machines, each master and agent takes the same flags with that machine's addresses (see the
# README), and the ports may all be the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d "${TMPDIR:-/tmp}/allot-real-XXXXXX")
pids=()

cleanup() {
	local code=$?
	for pid in "${pids[@]}"; do
		kill -INT "$pid" 2>/dev/null || true
	done
	for pid in "${pids[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	if ((code != 0)); then
		echo "real-cluster failed (exit $code); logs are in $work" >&2
		tail -n 20 "$work"/*.log >&2 || true
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

# free_port sets port to a TCP port nothing on this machine listens on (nor was handed out
# here), outside the agents' task port ranges (31000-31299), which tasks bind, and below the
# kernel's ephemeral range, from which the processes' own outgoing connections take their local
# ports (an agent's --http picked there was once taken by such a connection before the agent
# started). It runs in this shell, not in a $(...) subshell, so that the ports it hands out are
# remembered.
taken=" "
ephemeral_lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
((ephemeral_lo > 12000)) || ephemeral_lo=32768
free_port() {
	local p
	while :; do
		p=$((10000 + RANDOM % (ephemeral_lo - 10000)))
		[[ $taken == *" $p "* ]] && continue
		((p >= 31000 && p < 31300)) && continue
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			taken+="$p "
			port=$p
			return
		fi
	done
}

secret() { head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n'; }

master_secret=$(secret)
operator_token=$(secret)
files_secret=$(secret)
framework_secret=$(secret)
printf '{"examples": "%s"}\n' "$framework_secret" >"$work/creds.json"
agents_json="{"
for i in 1 2 3; do
	agent_secret[i]=$(secret)
	agents_json+="\"node-$i\": \"${agent_secret[i]}\""
	((i < 3)) && agents_json+=", "
done
echo "$agents_json}" >"$work/agents.json"

for i in 1 2 3; do
	free_port && raft[i]=$port
	free_port && http[i]=$port
	free_port && nats[i]=$port
	free_port && route[i]=$port
done
peers="m1=127.0.0.1:${raft[1]},m2=127.0.0.1:${raft[2]},m3=127.0.0.1:${raft[3]}"

echo "==> three masters: Raft on ${raft[*]}, HTTP on ${http[*]}, NATS on ${nats[*]}"
for i in 1 2 3; do
	routes=""
	for j in 1 2 3; do
		((j == i)) && continue
		routes+="${routes:+,}nats-route://127.0.0.1:${route[j]}"
	done
	bin/allot master --node-id "m$i" --data-dir "$work/m$i" \
		--raft-bind "127.0.0.1:${raft[i]}" --http "127.0.0.1:${http[i]}" --peers "$peers" --bootstrap \
		--nats-listen "127.0.0.1:${nats[i]}" --nats-cluster "127.0.0.1:${route[i]}" --nats-routes "$routes" \
		--nats-master-secret "$master_secret" --credentials "$work/creds.json" \
		--agent-credentials "$work/agents.json" --operator-token "$operator_token" \
		--files-secret "$files_secret" --log-level warn >"$work/m$i.log" 2>&1 &
	pids+=($!)
done

# readyz prints master port $1's answer to GET /readyz: its status code and body (bash alone,
# no curl needed).
readyz() {
	local resp
	exec 3<>"/dev/tcp/127.0.0.1/$1" || return 1
	printf 'GET /readyz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
	resp=$(tr -d '\r' <&3)
	exec 3>&-
	echo "$(head -n 1 <<<"$resp" | cut -d' ' -f2) $(tail -n 1 <<<"$resp")"
}
ready() { [[ $(readyz "$1" 2>/dev/null) == "200 ready" ]]; }
for _ in $(seq 1 600); do
	if ready "${http[1]}" && ready "${http[2]}" && ready "${http[3]}"; then
		break
	fi
	sleep 0.1
done
for i in 1 2 3; do
	if ! ready "${http[i]}"; then
		echo "master m$i is not ready after 60 s: $(readyz "${http[i]}" 2>&1)" >&2
		exit 1
	fi
done
echo "every master is ready"

nats_urls="nats://127.0.0.1:${nats[1]},nats://127.0.0.1:${nats[2]},nats://127.0.0.1:${nats[3]}"
echo "==> three agents on this machine: own credentials, hostnames, HTTP ports and port ranges"
for i in 1 2 3; do
	ports_lo=$((31000 + (i - 1) * 100))
	free_port
	ALLOT_AGENT_SECRET=${agent_secret[i]} bin/allot agent --nats "$nats_urls" --principal "node-$i" \
		--hostname "node-$i" --http "127.0.0.1:$port" --work-dir "$work/a$i" \
		--resources "cpus=2000,mem=4096,ports=$ports_lo-$((ports_lo + 99))" --attributes "rack=r$i" \
		--files-secret "$files_secret" --log-level warn >"$work/a$i.log" 2>&1 &
	pids+=($!)
done

export ALLOT_MASTERS="127.0.0.1:${http[1]},127.0.0.1:${http[2]},127.0.0.1:${http[3]}"
export ALLOT_OPERATOR_TOKEN=$operator_token
for _ in $(seq 1 600); do
	active=$(bin/allot agents list --json | grep -c '"state": "active"' || true)
	((active == 3)) && break
	sleep 0.1
done
if ((active != 3)); then
	echo "$active of 3 agents active after 60 s" >&2
	exit 1
fi
bin/allot status

export ALLOT_PRINCIPAL=examples ALLOT_SECRET=$framework_secret
echo
echo "==> MapReduce against the masters' NATS servers, as principal $ALLOT_PRINCIPAL"
bin/mapreduce run --nats "$nats_urls" --quiet --verify

echo
echo "==> MPI: a gang of 3 ranks, one per agent"
bin/mpi run --nats "$nats_urls" --ranks 3 --placement spread

echo
echo "==> allot status after the examples"
status=$(bin/allot status)
echo "$status"
if ! grep -q "^agents      3: 3 active" <<<"$status"; then
	echo "status does not show the three agents active" >&2
	exit 1
fi
echo "real cluster: every result verified"
