// Command mpi is an example framework that runs an MPI-style job: a gang
// of N ranks, placed all or nothing across the cluster, that find each
// other over TCP and compute together.
//
// Usage:
//
//	mpi run --nats nats://127.0.0.1:4222 --ranks 3 --placement spread
//	mpi run --nats URL --ranks 4 --placement rack --rack r1 --deadline 10s
//
// Flags of `mpi run`:
//
//	--nats URLS        NATS URLs of the cluster, comma-separated (default
//	                   $ALLOT_NATS, else nats://127.0.0.1:4222)
//	--ranks N          number of ranks (default 3)
//	--placement P      spread: one rank per agent (unique hostname);
//	                   rack: all ranks in one rack (same rack)
//	--rack R           only agents whose rack is R (either placement)
//	--vector-len L     elements of the vector to allreduce (default 1000)
//	--intervals K      intervals of the pi integration (default 100000)
//	--deadline D       time to place the gang before giving up (default 30s)
//	--timeout T        deadline of the whole run (default 2m)
//	--cpus C, --mem M  each rank's milli-CPUs and MiB (default 200 and 64)
//	--name, --role     the framework's name and role
//	--log-level LEVEL  the driver's log on stderr (default warn)
//
// What happens:
//
//  1. The framework subscribes and hands every offer to the SDK's gang
//     helper (framework.Gang), which holds offers until all N ranks fit
//     under the placement's group constraint, each with one port.
//  2. Once placed, and before anything starts, the gang's Prepare hook
//     gives every rank rank 0's address: the host of rank 0's agent (its
//     advertised address) and rank 0's port. Every rank gets
//     ALLOT_MPI_ROOT, ALLOT_MPI_RANK and ALLOT_MPI_SIZE; the agent adds
//     PORT0 and ALLOT_AGENT_HTTP. The ranks launch together, one launch
//     group per agent.
//  3. Each rank (`mpi rank`, this same program) listens on its port. The
//     others join rank 0 with the address they listen on; rank 0 sends
//     everyone the ring's addresses; each rank connects to the next. Then
//     a ring allreduce (reduce-scatter, then allgather) sums a vector
//     whose element i on rank r is (r+1)·(i mod 1000 + 1), and a second
//     one sums each rank's share of the midpoint-rule integral of
//     4/(1+x²) over [0, 1], which is pi. Every rank reports its results
//     to rank 0, which checks they agree and prints them on its stdout.
//     Every network step has a deadline; a rank that meets an error
//     exits non-zero and says why on stderr.
//  4. When every rank has FINISHED, the framework reads rank 0's stdout
//     from its agent's file server (with the framework's files token),
//     recomputes the vector's checksum, a few elements and pi locally,
//     prints both, and says "verified" or what differs.
//
// If the gang cannot be placed before --deadline (more ranks than agents
// with spread, a rack without room), the gang releases everything it
// held, and the framework prints what it wanted, what each agent offered
// and how many ranks those offers could hold. Whatever happens, the
// framework tears itself down before it exits, so nothing of it is left
// running, and --timeout bounds the whole run.
//
// Exit status: 0 when the results were verified; 1 when the gang was not
// placed, a rank failed, the results did not check or the run timed out;
// 2 for a usage error.
package main
