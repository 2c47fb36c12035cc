// A process-wide request to stop, for what waits where no stop callback reaches: reading an
// input that may never have more bytes (stdin from a pipe or a terminal). A signal handler sets
// it (the CLI's first Ctrl-C, SIGTERM or SIGHUP); such a read then ends with a Cancelled error
// instead of waiting for input that may never come.
#pragma once

namespace tokenmill {

// Async-signal-safe.
void RequestStop();
bool StopRequested();
// Forgets an earlier request (a new run in the same process).
void ClearStopRequest();

}  // namespace tokenmill
