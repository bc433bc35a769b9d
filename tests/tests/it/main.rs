//! The end-to-end tests: one test binary, one module per topic. They run
//! the real binaries and `scripts/crawl.sh` against webs served on loopback
//! (`testkit`); `support` holds what they share.

mod archive_tools;
mod damage;
mod demo_web;
mod disk_floor;
mod docs;
mod e2e_crawl;
mod e2e_crawl_sh;
mod e2e_demo;
mod e2e_https;
mod e2e_kill;
mod e2e_rounds;
mod history_generations;
mod host_rules;
mod host_rules_keys;
mod inputs;
mod latency_web;
mod link_reader;
mod metadata_outlinks;
mod metrics;
mod one_page_urls;
mod outage;
mod prune;
mod raw_wire;
mod recrawl;
mod report_html;
mod research;
mod scale_bench;
mod seen_growth;
mod sharded_outputs;
mod shards;
mod short_rounds;
mod sitemaps;
mod slurm;
mod support;
mod url_order;
mod warc_store;
mod warcio_check;
