//! The columnar index of captures: one row per `response` or `revisit`
//! record, in Apache Parquet, with the columns of Common Crawl's columnar
//! index (`cc-index-table`, same names and meanings) that this crawl
//! knows, then its own. [`schema`] is the one definition of the columns;
//! docs/formats.md lists them.
//!
//! Written with the Apache Arrow project's writer: rows are gathered in
//! Arrow arrays, [`BATCH_ROWS`] at a time, and written as row groups of at
//! most [`ROW_GROUP_ROWS`] rows, zstd-compressed, strings
//! dictionary-encoded, with min/max statistics per page (so that a query on
//! `url_surtkey` or `url_host_name` skips what cannot match).

use std::io::Write;
use std::sync::Arc;

use arrow_array::builder::{
    Float64Builder, Int16Builder, Int32Builder, Int64Builder, StringBuilder,
    TimestampMillisecondBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;

/// Rows gathered before they are written.
pub const BATCH_ROWS: usize = 8192;
/// Most rows in one row group.
pub const ROW_GROUP_ROWS: usize = 128 * 1024;
/// The version of the table's columns, in each file's key-value metadata
/// (`crawl.index.version`): a changed column is a new version.
pub const TABLE_VERSION: &str = "1";

/// How a column's value is read from a [`Row`].
#[derive(Clone, Copy)]
enum Get {
    Str(for<'r, 's> fn(&'r Row<'s>) -> Option<&'r str>),
    I16(fn(&Row<'_>) -> Option<i16>),
    I32(fn(&Row<'_>) -> Option<i32>),
    I64(fn(&Row<'_>) -> Option<i64>),
    F64(fn(&Row<'_>) -> Option<f64>),
    /// Milliseconds since the epoch, UTC.
    Time(fn(&Row<'_>) -> Option<i64>),
}

/// The columns in order: name, whether it may be null, its value. The
/// first 31 are Common Crawl's (`url_port`, `warc_record_id`,
/// `warc_record_offset` and `warc_record_length` with wider types: 64-bit
/// offsets, the record ID as text); the rest are this crawl's.
const COLUMNS: &[(&str, bool, Get)] = &[
    ("url_surtkey", false, Get::Str(|r| Some(r.url_surtkey))),
    ("url", false, Get::Str(|r| Some(r.url))),
    ("url_host_name", false, Get::Str(|r| Some(r.host))),
    (
        "url_host_tld",
        true,
        Get::Str(|r| r.host_labels.first().copied()),
    ),
    (
        "url_host_2nd_last_part",
        true,
        Get::Str(|r| r.host_labels.get(1).copied()),
    ),
    (
        "url_host_3rd_last_part",
        true,
        Get::Str(|r| r.host_labels.get(2).copied()),
    ),
    (
        "url_host_4th_last_part",
        true,
        Get::Str(|r| r.host_labels.get(3).copied()),
    ),
    (
        "url_host_5th_last_part",
        true,
        Get::Str(|r| r.host_labels.get(4).copied()),
    ),
    (
        "url_host_registry_suffix",
        true,
        Get::Str(|r| r.registry_suffix),
    ),
    (
        "url_host_registered_domain",
        true,
        Get::Str(|r| r.registered_domain),
    ),
    (
        "url_host_name_reversed",
        true,
        Get::Str(|r| r.host_reversed),
    ),
    ("url_protocol", false, Get::Str(|r| Some(r.protocol))),
    ("url_port", true, Get::I32(|r| r.port.map(i32::from))),
    ("url_path", false, Get::Str(|r| Some(r.path))),
    ("url_query", true, Get::Str(|r| r.query)),
    ("fetch_time", false, Get::Time(|r| Some(r.fetch_time_ms))),
    ("fetch_status", false, Get::I16(|r| Some(r.status))),
    ("fetch_redirect", true, Get::Str(|r| r.redirect)),
    ("content_digest", true, Get::Str(|r| r.digest)),
    ("content_mime_type", true, Get::Str(|r| r.mime_type)),
    ("content_mime_detected", true, Get::Str(|r| r.mime_detected)),
    ("content_charset", true, Get::Str(|r| r.charset)),
    ("content_languages", true, Get::Str(|r| r.languages)),
    ("content_truncated", true, Get::Str(|r| r.truncated)),
    ("warc_record_id", false, Get::Str(|r| Some(r.record_id))),
    ("warc_filename", false, Get::Str(|r| Some(r.filename))),
    (
        "warc_record_offset",
        false,
        Get::I64(|r| Some(r.offset as i64)),
    ),
    (
        "warc_record_length",
        false,
        Get::I64(|r| Some(r.length as i64)),
    ),
    ("warc_segment", false, Get::Str(|r| Some(r.segment))),
    ("crawl", false, Get::Str(|r| Some(r.crawl))),
    ("subset", false, Get::Str(|r| Some(r.subset))),
    ("warc_record_type", false, Get::Str(|r| Some(r.record_type))),
    (
        "content_charset_source",
        true,
        Get::Str(|r| r.charset_source),
    ),
    // The bits as they are, in a signed column, which every reader has.
    (
        "content_simhash",
        true,
        Get::I64(|r| r.simhash.map(|h| h as i64)),
    ),
    (
        "content_text_length",
        true,
        Get::I64(|r| r.text_length.map(|n| n as i64)),
    ),
    ("fetch_round", false, Get::I32(|r| Some(r.round))),
    ("fetch_hops", true, Get::I32(|r| r.hops)),
    ("fetch_via", true, Get::Str(|r| r.via)),
    ("crawl_shard", true, Get::I32(|r| r.shard)),
    ("score", true, Get::F64(|_| None)),
];

/// The table's schema, with its version in the metadata.
pub fn schema() -> SchemaRef {
    let fields: Vec<Field> = COLUMNS
        .iter()
        .map(|(name, nullable, get)| {
            let t = match get {
                Get::Str(_) => DataType::Utf8,
                Get::I16(_) => DataType::Int16,
                Get::I32(_) => DataType::Int32,
                Get::I64(_) => DataType::Int64,
                Get::F64(_) => DataType::Float64,
                Get::Time(_) => DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
            };
            Field::new(*name, t, *nullable)
        })
        .collect();
    let metadata = [("crawl.index.version".to_string(), TABLE_VERSION.to_string())];
    let metadata: std::collections::HashMap<String, String> = metadata.into_iter().collect();
    Arc::new(Schema::new(fields).with_metadata(metadata))
}

/// One row, borrowed from the record it describes.
#[derive(Debug, Default, Clone)]
pub struct Row<'a> {
    pub url_surtkey: &'a str,
    pub url: &'a str,
    pub host: &'a str,
    /// The host's labels, last first (`com`, `example`, `www`): none for an
    /// IP address.
    pub host_labels: Vec<&'a str>,
    pub registry_suffix: Option<&'a str>,
    pub registered_domain: Option<&'a str>,
    pub host_reversed: Option<&'a str>,
    pub protocol: &'a str,
    pub port: Option<u16>,
    pub path: &'a str,
    pub query: Option<&'a str>,
    /// Milliseconds since the epoch.
    pub fetch_time_ms: i64,
    pub status: i16,
    pub redirect: Option<&'a str>,
    pub digest: Option<&'a str>,
    pub mime_type: Option<&'a str>,
    pub mime_detected: Option<&'a str>,
    pub charset: Option<&'a str>,
    pub languages: Option<&'a str>,
    pub truncated: Option<&'a str>,
    pub record_id: &'a str,
    pub filename: &'a str,
    pub offset: u64,
    pub length: u64,
    pub segment: &'a str,
    pub crawl: &'a str,
    pub subset: &'a str,
    pub record_type: &'a str,
    pub charset_source: Option<&'a str>,
    pub simhash: Option<u64>,
    pub text_length: Option<u64>,
    pub round: i32,
    pub hops: Option<i32>,
    pub via: Option<&'a str>,
    pub shard: Option<i32>,
}

/// A column's values being gathered.
enum Builder {
    Str(StringBuilder),
    I16(Int16Builder),
    I32(Int32Builder),
    I64(Int64Builder),
    F64(Float64Builder),
    Time(TimestampMillisecondBuilder),
}

/// The builders of one batch, one per column.
struct Columns {
    builders: Vec<Builder>,
    rows: usize,
}

impl Columns {
    fn new() -> Columns {
        let n = BATCH_ROWS;
        let builders = COLUMNS
            .iter()
            .map(|(_, _, get)| match get {
                Get::Str(_) => Builder::Str(StringBuilder::with_capacity(n, n * 16)),
                Get::I16(_) => Builder::I16(Int16Builder::with_capacity(n)),
                Get::I32(_) => Builder::I32(Int32Builder::with_capacity(n)),
                Get::I64(_) => Builder::I64(Int64Builder::with_capacity(n)),
                Get::F64(_) => Builder::F64(Float64Builder::with_capacity(n)),
                Get::Time(_) => Builder::Time(
                    TimestampMillisecondBuilder::with_capacity(n).with_timezone("UTC"),
                ),
            })
            .collect();
        Columns { builders, rows: 0 }
    }

    fn push(&mut self, r: &Row<'_>) {
        for (b, (_, _, get)) in self.builders.iter_mut().zip(COLUMNS) {
            match (b, get) {
                (Builder::Str(b), Get::Str(f)) => b.append_option(f(r)),
                (Builder::I16(b), Get::I16(f)) => b.append_option(f(r)),
                (Builder::I32(b), Get::I32(f)) => b.append_option(f(r)),
                (Builder::I64(b), Get::I64(f)) => b.append_option(f(r)),
                (Builder::F64(b), Get::F64(f)) => b.append_option(f(r)),
                (Builder::Time(b), Get::Time(f)) => b.append_option(f(r)),
                _ => unreachable!("builders are made from the column list"),
            }
        }
        self.rows += 1;
    }

    /// The batch, in schema order; the builders start over.
    fn finish(&mut self, schema: &SchemaRef) -> Result<RecordBatch, ParquetError> {
        let columns: Vec<ArrayRef> = self
            .builders
            .iter_mut()
            .map(|b| -> ArrayRef {
                match b {
                    Builder::Str(b) => Arc::new(b.finish()),
                    Builder::I16(b) => Arc::new(b.finish()),
                    Builder::I32(b) => Arc::new(b.finish()),
                    Builder::I64(b) => Arc::new(b.finish()),
                    Builder::F64(b) => Arc::new(b.finish()),
                    Builder::Time(b) => Arc::new(b.finish()),
                }
            })
            .collect();
        self.rows = 0;
        Ok(RecordBatch::try_new(schema.clone(), columns)?)
    }
}

/// The writer's settings: zstd level 3, row groups of [`ROW_GROUP_ROWS`].
pub fn writer_properties() -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::ZSTD(
            ZstdLevel::try_new(3).expect("3 is a zstd level"),
        ))
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .set_created_by(format!("segmenter {}", env!("CARGO_PKG_VERSION")))
        .build()
}

/// Writes the rows of one file.
pub struct TableWriter<W: Write + Send> {
    schema: SchemaRef,
    columns: Columns,
    writer: ArrowWriter<W>,
    /// Rows written.
    pub rows: u64,
}

impl<W: Write + Send> TableWriter<W> {
    /// A writer into `file` (the caller names it and puts it in place).
    pub fn new(file: W) -> Result<TableWriter<W>, ParquetError> {
        let schema = schema();
        let writer = ArrowWriter::try_new(file, schema.clone(), Some(writer_properties()))?;
        Ok(TableWriter {
            schema,
            columns: Columns::new(),
            writer,
            rows: 0,
        })
    }

    /// Adds a row.
    pub fn push(&mut self, row: &Row<'_>) -> Result<(), ParquetError> {
        self.columns.push(row);
        self.rows += 1;
        if self.columns.rows >= BATCH_ROWS {
            self.flush_batch()?;
        }
        Ok(())
    }

    fn flush_batch(&mut self) -> Result<(), ParquetError> {
        if self.columns.rows > 0 {
            let batch = self.columns.finish(&self.schema)?;
            self.writer.write(&batch)?;
        }
        Ok(())
    }

    /// Writes what is left and the file's footer; returns the file.
    pub fn finish(mut self) -> Result<W, ParquetError> {
        self.flush_batch()?;
        self.writer.into_inner()
    }
}
