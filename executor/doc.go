// Package executor is the allot agent: the daemon that runs on every
// worker, offers the machine's resources to the masters and runs the
// tasks frameworks launch on them.
//
// An Agent registers with the leading master over NATS (RegisterRequest,
// with its hostname, file server address, resources and attributes) and
// checkpoints the agent ID it is given before anything else. It then
// heartbeats every interval the master asks for, and listens on its
// command subject (allot.agent.<id>.cmd) for:
//
//   - LaunchCommand and LaunchGroupCommand. A launch delivered again (a
//     new leader resends launches still STAGING) is ignored: tasks are
//     known by (framework ID, task ID). Each task is admitted first: a
//     valid description for this agent, hard constraints the agent's
//     attributes satisfy (protocol.MatchHard; else ERROR,
//     constraint_violated), and resources within what the tasks already
//     admitted leave free (else ERROR, task_invalid). It is then STARTING
//     while its sandbox is prepared (URIs fetched: FAILED, fetch_failed on
//     a failure or an output path that escapes the sandbox) and its
//     process started (executor/runner), and RUNNING once started. A group
//     runs all or nothing (see launchGroup); tasks of a plain launch that
//     carry a group ID are launched as that group.
//   - KillCommand: KILLING, then KILLED (killed_by_framework) once the
//     process ended: SIGTERM, then SIGKILL after the task's
//     KillGracePeriod (or Config.DefaultGrace). A kill of a task the agent
//     never had is answered with LOST (task_unknown); a later launch of
//     that task is ignored.
//   - ShutdownFrameworkCommand: every task of the framework is killed
//     (framework_removed), and the framework is remembered gone, even
//     with nothing of it running here (see Sandboxes).
//   - AckCommand: the named status updates are stored by the master and
//     need not be sent again.
//   - CoflowPrioritiesCommand: the new order of the shuffle transfers
//     (see File server).
//
// A malformed or unexpected command is logged and dropped.
//
// A task runs as the user its command names (CommandInfo.User, which the
// master fills with the task's effective user), else as Config.TaskUser,
// else as the agent's own user; only an agent running as root runs tasks
// as other users. A user the agent does not know, or cannot switch to,
// ends the task in ERROR (task_invalid) before it starts. The task's
// sandbox belongs to that user, mode 0700, and the records of its shim
// are kept outside it, where the task cannot reach them (see Checkpoint
// and restart, and executor/runner). Command health checks run as the
// task's user too.
//
// When a task's process ends the agent reports FINISHED (exit 0), FAILED
// (command_failed, with the exit code and the tail of stderr), KILLED
// (after a kill request), FAILED memory_limit, or FAILED
// executor_terminated (its shim died without recording an exit).
//
// # Reliable status updates
//
// Every status update gets a fresh UUID and is checkpointed with its task
// before it is sent: it is sent only once the record holding it is on
// disk. Updates are sent in batches (all queued updates of a
// task in one request, in order) until the master acknowledges them, by
// the request's reply or by an AckCommand, and resent every
// ResendInterval otherwise, and at once when a new leader announces
// itself. An update the master refuses can never apply; it is logged and
// dropped.
//
// When the leader does not know the agent (a failover that lost it, a
// partition, a restart), the agent reregisters with every task it still
// owns, each with the status of its oldest unacknowledged update, and then
// sends its queue again. If the master does not know the agent ID at all
// (the agent was marked gone), the agent kills its tasks, which the master
// has given up, and registers anew.
//
// # Checkpoint and restart
//
// The work directory holds agent.json (the agent ID), tasks.journal,
// sandboxes/<name>/ and control/<name>/ (the records of the task's shim:
// its spec, pids, kill request and exit). A task's sandbox is normally
// named "<framework ID>_<task ID>"; /v1/state lists it. The work directory
// and sandboxes/ are mode 0711 and control/ 0700: a task reaches its own
// sandbox and nothing else there.
//
// Each task has a record: its description, state, kill request and
// unacknowledged updates. The records live in tasks.journal, an
// append-only file of whole records and removals, each entry a line with
// a CRC. Record changes are not written under the task store's lock one by one:
// a flusher goroutine appends all those that accumulated while its
// previous write ran with one write and one fsync (group commit), and
// only then are the updates they hold sent; a reregistration likewise
// waits until the records it reports are on disk. On start the journal is
// replayed (the last entry of a task wins; an entry cut short by a crash
// fails its CRC and is ignored, leaving the task's previous, complete
// record) and rewritten with just the live records, atomically; it is
// rewritten the same way when it grows to several times their number. So
// a crash at any point leaves every task some completely written record,
// and never loses an update that was sent. A failed write is logged and
// the agent carries on as if it had succeeded (see flusher.go): only a
// crash before the journal is written again loses those changes. Records
// kept as tasks/<name>.json by earlier versions are moved into the journal
// at start.
//
// Stopping Run writes what is queued and leaves the tasks running (their
// shims are detached). A new agent on the same work directory reregisters
// with the same ID, never anew, and finds its tasks again: one still
// running is watched; one that ended meanwhile is reported from its
// recorded exit; one whose shim died is FAILED executor_terminated; one
// whose launch the stop interrupted is DROPPED agent_restarted (it never
// started, so the framework may launch it again). Because a
// record holds the task's state and its queue together, and is one journal
// entry, a final status is queued exactly once, however often the agent
// restarts.
//
// # Sandboxes
//
// An ended task's sandbox stays for Config.GCDelay after its end (the
// files token's lifetime by default), readable through the file server,
// and is then removed with its shim's records (Mesos's --gc_delay). When
// the work directory's file system is fuller than Config.GCDiskThreshold,
// or the sandboxes larger than Config.GCDiskBudget, the ended sandboxes
// of frameworks the agent was told are gone go earlier, oldest end first,
// until back under; a framework that may still read its sandboxes keeps
// them until their delay, and a running task's sandbox always stays. The
// agent checks every Config.GCInterval, and after a task's end or a
// framework's shutdown. The frameworks known gone are kept in
// frameworks_gone.json across restarts; a restarted agent counts the
// sandboxes it has no record of as ended when their shim's records last
// changed. Removal follows no symbolic link and gets past directories a
// task made unreadable (sandbox_gc_fs.go).
//
// # File server
//
// The agent serves HTTP on Config.HTTPAddr: /v1/files/ (executor/files,
// with the bearer token Config.FilesToken), /healthz and /v1/state. The
// file server serves sandboxes/ only, never control/. Each task gets a
// framework token in ALLOT_FILES_TOKEN that reads its framework's
// sandboxes on every agent sharing Config.FilesSecret, until
// Config.FilesTokenTTL after its launch.
//
// Downloads that name a coflow (coflow=<id>&dst=<agent>) are shuffle
// transfers: Config.ShuffleSlots of them are served at once, the others
// wait and are served in the order of the leader's latest
// CoflowPrioritiesCommand (a flow's own rank, else its coflow's; unranked
// transfers last; arrival order among equals). A command older than the
// last one applied, by its epoch, is dropped. With Config.ShuffleEgress the
// transfers being served share that many bytes a second, a chunk at a
// time, the best-ranked first; downloads naming no coflow go through that
// port too, unranked. With Config.ShuffleIngress the agents sending into
// this one ask it for each chunk (shuffle_ingress.go), and it grants them
// that many bytes a second by the command's ingress list. While transfers
// run, at most every Config.ShuffleReportInterval, the agent reports each
// flow's totals (bytes sent, transfers completed) to the leader in a
// CoflowReportRequest; a completed transfer is reported at once (at most
// 5 ms after the last report).
package executor
