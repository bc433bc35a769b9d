//! The demo web: a deterministic set of sites served on loopback.
