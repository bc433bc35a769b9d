//! The fetcher's integration tests: one test binary, one module per topic.
//! Each runs the real `fetcher` against loopback servers (`testkit`);
//! `support` holds what they share.

mod bad_input;
mod budgets;
mod cli;
mod connections;
mod dns;
mod fetch_basics;
mod limits;
mod proxy;
mod redirects;
mod robots;
mod rounds;
mod settings_sample;
mod stop_resume;
mod support;
mod tls;
