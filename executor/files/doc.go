// Package files serves task sandboxes over HTTP: listing, reading and
// tailing files, for logs and for the MapReduce shuffle.
//
// The agent keeps each task's sandbox as a directory under one root
// (Config.Root, e.g. WorkDir/sandboxes); NewHandler returns an
// http.Handler that serves what lies under it:
//
//	GET /v1/files/list?path=P                  the entries of directory P ([]Entry)
//	GET /v1/files/read?path=P&offset=N&length=M  M bytes of file P from N (ReadResponse);
//	                                           offset=-1 answers the size only
//	GET /v1/files/download?path=P              the raw bytes of P (Range requests work);
//	                                           HEAD works too
//	GET /v1/files/tail?path=P&lines=N&follow=1 the last N lines of P as text; with
//	                                           follow, then whatever is appended to it
//
// A download may name the shuffle transfer it is, with
// coflow=<coflow ID>&dst=<agent ID of the fetching task>: with a Shuffle
// configured (Config.Shuffle), such a download waits for its turn before it
// is served, and its outcome (bytes sent, completed or not) is reported to
// the Shuffle. The coflow's framework is the sandbox's: that of a
// framework token, else the first element of P up to its first "_". A
// download naming no coflow goes to the Shuffle too, as a Transfer of no
// coflow, which it paces without ordering or reporting it.
//
// P is a slash-separated path relative to the root, such as
// "<sandbox>/stdout"; "." is the root itself. Every request must carry
// Config.Token, or with Config.Secret a framework token, as
// "Authorization: Bearer <token>" or a "token" query parameter. A framework
// token (protocol.FrameworkFilesToken, FrameworkToken; refused once it
// expired) reads only that framework's sandboxes, the first
// elements of P that start with "<framework>_". All files are opened
// through an os.Root, so neither ".." components, absolute paths nor
// symbolic links can reach anything outside the root, or for a framework
// token outside the sandbox P names: relative symbolic links that stay
// inside are followed, the others are refused like escapes.
//
// Errors are JSON (ErrorResponse) with a stable Code: 400 for a malformed
// request, 401 for a missing or wrong token, 403 for a path that leaves the
// root or a file the agent may not read, 404 for a missing file or an
// unknown endpoint, 405 for a wrong method, 503 for a shuffle transfer
// refused because the agent is stopping. Read, download and tail serve
// regular files only; list serves directories only.
package files
