//! [`HostDb::overview`]: the hosts of a crawl at a glance, for the HTML
//! report: counts by robots.txt state, the hosts that lead by pages, errors
//! and Crawl-delay, those held now, and how pages spread over hosts. A few
//! aggregate queries: the top N rows, never the whole table, leave the
//! database.

use super::{HostDb, HostDbError, SELECT_HOST};

/// One host as the report lists it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostRow {
    /// The host name.
    pub host: String,
    /// Pages fetched over the crawl.
    pub pages: u64,
    /// Failed requests over the crawl.
    pub errors: u64,
    /// Failures in a row now.
    pub consecutive_errors: u64,
    /// Its Crawl-delay, if robots.txt gives one.
    pub crawl_delay_ms: Option<u64>,
    /// HTTP status of its robots.txt (0: unreachable; `None`: never fetched).
    pub robots_status: Option<i64>,
    /// No request before this time (Unix ms), if set.
    pub next_contact_ms: Option<i64>,
    /// WARC bytes stored for it.
    pub bytes: u64,
}

/// The overview [`HostDb::overview`] returns.
#[derive(Debug, Clone, Default)]
pub struct HostOverview {
    /// Hosts known.
    pub hosts: u64,
    /// Hosts by robots.txt state: `never fetched`, `2xx`, `4xx (allow
    /// all)`, `5xx or unreachable`, `other`.
    pub robots: Vec<(&'static str, u64)>,
    /// Hosts whose robots.txt gives a Crawl-delay.
    pub with_crawl_delay: u64,
    /// Hosts failing now (at least one failure since their last success).
    pub failing: u64,
    /// Hosts that may not be asked before some time after `now`.
    pub held: u64,
    /// The first hosts by pages, by errors, by Crawl-delay, by failures in a
    /// row, and by how long they are held.
    pub top_pages: Vec<HostRow>,
    /// See `top_pages`.
    pub top_errors: Vec<HostRow>,
    /// See `top_pages`.
    pub top_delay: Vec<HostRow>,
    /// See `top_pages`.
    pub top_failing: Vec<HostRow>,
    /// See `top_pages`.
    pub top_held: Vec<HostRow>,
    /// Hosts by pages fetched: (bucket label, hosts), buckets `0`, `1`,
    /// `2–9`, `10–99`, `100–999`, `1000+`.
    pub pages_per_host: Vec<(&'static str, u64)>,
}

impl HostDb {
    /// The overview of the hosts, with `top` rows per list; `now_ms` decides
    /// which hosts are held. A file before version 4 has no hold times and
    /// byte counts: those read as none.
    pub fn overview(&self, top: usize, now_ms: i64) -> Result<HostOverview, HostDbError> {
        let current = self.select == SELECT_HOST;
        let held_expr = if current { "next_contact_ms" } else { "NULL" };
        let bytes_expr = if current { "bytes_total" } else { "0" };
        let count = |sql: &str| -> Result<u64, HostDbError> {
            self.conn
                .query_row(sql, [], |r| r.get::<_, i64>(0))
                .map(|n| n.max(0) as u64)
                .map_err(|e| self.sql_error(e))
        };
        let rows = |filter: &str, order: &str| -> Result<Vec<HostRow>, HostDbError> {
            let sql = format!(
                "SELECT host, pages_total, errors_total, consecutive_errors, crawl_delay_ms, \
                 robots_status, {held_expr}, {bytes_expr} FROM hosts WHERE {filter} \
                 ORDER BY {order} DESC, host LIMIT {top}"
            );
            let mut stmt = self.conn.prepare(&sql).map_err(|e| self.sql_error(e))?;
            let found = stmt
                .query_map([], |r| {
                    Ok(HostRow {
                        host: r.get(0)?,
                        pages: r.get::<_, i64>(1)?.max(0) as u64,
                        errors: r.get::<_, i64>(2)?.max(0) as u64,
                        consecutive_errors: r.get::<_, i64>(3)?.max(0) as u64,
                        crawl_delay_ms: r.get::<_, Option<i64>>(4)?.map(|n| n.max(0) as u64),
                        robots_status: r.get(5)?,
                        next_contact_ms: r.get(6)?,
                        bytes: r.get::<_, i64>(7)?.max(0) as u64,
                    })
                })
                .map_err(|e| self.sql_error(e))?;
            found
                .collect::<Result<_, _>>()
                .map_err(|e| self.sql_error(e))
        };
        let robots = [
            ("never fetched", "robots_status IS NULL"),
            ("2xx", "robots_status BETWEEN 200 AND 299"),
            ("4xx (allow all)", "robots_status BETWEEN 400 AND 499"),
            (
                "5xx or unreachable",
                "robots_status = 0 OR robots_status >= 500",
            ),
            (
                "other",
                "robots_status BETWEEN 1 AND 199 OR robots_status BETWEEN 300 AND 399",
            ),
        ];
        let mut robots_counts = Vec::new();
        for (label, filter) in robots {
            robots_counts.push((
                label,
                count(&format!("SELECT count(*) FROM hosts WHERE {filter}"))?,
            ));
        }
        let buckets = [
            ("0", "pages_total <= 0"),
            ("1", "pages_total = 1"),
            ("2–9", "pages_total BETWEEN 2 AND 9"),
            ("10–99", "pages_total BETWEEN 10 AND 99"),
            ("100–999", "pages_total BETWEEN 100 AND 999"),
            ("1000+", "pages_total >= 1000"),
        ];
        let mut pages_per_host = Vec::new();
        for (label, filter) in buckets {
            pages_per_host.push((
                label,
                count(&format!("SELECT count(*) FROM hosts WHERE {filter}"))?,
            ));
        }
        let held_filter = format!("{held_expr} > {now_ms}");
        Ok(HostOverview {
            hosts: count("SELECT count(*) FROM hosts")?,
            robots: robots_counts,
            with_crawl_delay: count("SELECT count(*) FROM hosts WHERE crawl_delay_ms IS NOT NULL")?,
            failing: count("SELECT count(*) FROM hosts WHERE consecutive_errors > 0")?,
            held: count(&format!("SELECT count(*) FROM hosts WHERE {held_filter}"))?,
            top_pages: rows("pages_total > 0", "pages_total")?,
            top_errors: rows("errors_total > 0", "errors_total")?,
            top_delay: rows("crawl_delay_ms IS NOT NULL", "crawl_delay_ms")?,
            top_failing: rows("consecutive_errors > 0", "consecutive_errors")?,
            top_held: rows(&held_filter, held_expr)?,
            pages_per_host,
        })
    }
}

impl HostDb {
    /// Every host whose robots.txt gives a Crawl-delay, with it (ms): few
    /// hosts of a crawl have one.
    pub fn crawl_delays(&self) -> Result<Vec<(String, u64)>, HostDbError> {
        let mut stmt = self
            .conn
            .prepare("SELECT host, crawl_delay_ms FROM hosts WHERE crawl_delay_ms IS NOT NULL")
            .map_err(|e| self.sql_error(e))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)?.max(0) as u64)))
            .map_err(|e| self.sql_error(e))?;
        rows.collect::<Result<_, _>>()
            .map_err(|e| self.sql_error(e))
    }
}
