//! Test support: loopback HTTP servers with request logs, the demo web, and
//! helpers to run the project's binaries.
