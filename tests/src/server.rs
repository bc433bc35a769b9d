//! Loopback HTTP/1.1 servers acting as separate hosts, with request logs.
