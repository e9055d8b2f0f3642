# devcluster.sh: start and stop a local cluster (`allot dev`) for the scripts that run the
# examples against one. Source it, then:
#
#   start_dev_cluster DIR [ALLOT DEV FLAGS...]   # starts bin/allot dev under DIR on free ports,
#                                                # waits until it is ready, prints its banner and
#                                                # exports the credentials it prints (ALLOT_NATS,
#                                                # ALLOT_PRINCIPAL, ALLOT_SECRET, ALLOT_MASTERS,
#                                                # ALLOT_OPERATOR_TOKEN); sets dev_out to its banner
#   stop_dev_cluster                             # stops it (Ctrl-C), if it runs
#
# The cluster runs with tenant isolation on: the examples and the operator commands connect
# with the credentials it prints.

dev=""
dev_out=""

start_dev_cluster() {
	local dir=$1
	shift
	mkdir -p "$dir"
	dev_out=$dir/dev.out
	bin/allot dev --data-dir "$dir/cluster" --nats-port 0 --http-port 0 --raft-port 0 \
		--log-level warn "$@" >"$dev_out" 2>"$dir/dev.log" &
	dev=$!
	local ready=""
	for _ in $(seq 1 600); do
		ready=$(awk '$1 == "export" && $2 ~ /^ALLOT_SECRET=/ { print "ready" }' "$dev_out")
		[[ -n $ready ]] && break
		if ! kill -0 "$dev" 2>/dev/null; then
			echo "allot dev stopped before it was ready:" >&2
			cat "$dev_out" "$dir/dev.log" >&2
			return 1
		fi
		sleep 0.1
	done
	if [[ -z $ready ]]; then
		echo "allot dev was not ready after 60 s" >&2
		return 1
	fi
	cat "$dev_out"
	eval "$(awk '$1 == "export"' "$dev_out")"
}

stop_dev_cluster() {
	if [[ -n $dev ]] && kill -0 "$dev" 2>/dev/null; then
		kill -INT "$dev"
		wait "$dev" || true
	fi
	dev=""
}
