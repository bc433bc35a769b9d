//! Finding the project binaries next to the test executable.
