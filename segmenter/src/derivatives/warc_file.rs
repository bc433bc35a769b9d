//! The research outputs of one WARC file, written beside it in one read of
//! its records: `NAME.warc.wet.gz` (a `conversion` record with the visible
//! text of each 2xx HTML page), `NAME.warc.wat.gz` (a `metadata` record
//! with the JSON envelope of every record) and `NAME.parquet` (one row per
//! capture). Each is written under a temporary name and renamed into place
//! when the file has been read to its end, so an output that exists is
//! complete.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use common::atomic::AtomicFile;
use common::warc::{ExchangeEncoder, Record, WarcError, WarcReader, WarcRecord};
use url::Url;

use super::capture::{self, CaptureReader, Facts, Origin, Owned};
use super::table::TableWriter;
use super::wat;

/// Which outputs to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Wanted {
    /// The columnar index (`NAME.parquet`).
    pub index: bool,
    /// The text (`NAME.warc.wet.gz`).
    pub wet: bool,
    /// The metadata (`NAME.warc.wat.gz`).
    pub wat: bool,
}

impl Wanted {
    /// True if nothing is wanted.
    pub fn none(self) -> bool {
        !(self.index || self.wet || self.wat)
    }
}

/// The output files of a WARC file named `name` in `dir`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outputs {
    pub index: PathBuf,
    pub wet: PathBuf,
    pub wat: PathBuf,
}

/// Suffix of the columnar index beside a WARC file.
pub const INDEX_SUFFIX: &str = ".parquet";
/// Suffix of a WET file (`NAME.warc.gz` → `NAME.warc.wet.gz`, Common
/// Crawl's naming).
pub const WET_SUFFIX: &str = ".warc.wet.gz";
/// Suffix of a WAT file.
pub const WAT_SUFFIX: &str = ".warc.wat.gz";

/// The outputs of the WARC file `warc` (`DIR/NAME.warc.gz` or `DIR/NAME.warc`).
pub fn outputs_of(warc: &Path) -> Outputs {
    let name = warc
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".gz").unwrap_or(&name);
    let stem = stem.strip_suffix(".warc").unwrap_or(stem);
    Outputs {
        index: warc.with_file_name(format!("{stem}{INDEX_SUFFIX}")),
        wet: warc.with_file_name(format!("{stem}{WET_SUFFIX}")),
        wat: warc.with_file_name(format!("{stem}{WAT_SUFFIX}")),
    }
}

/// What reading one file gave.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct FileTotals {
    /// Records read.
    pub records: u64,
    /// Rows of the index (captures).
    pub captures: u64,
    /// 2xx HTML pages, and their text records.
    pub pages: u64,
    /// Bytes of visible text.
    pub text_bytes: u64,
    /// Damaged records skipped.
    pub damaged: u64,
    /// Captures without a usable URI or HTTP head (no row).
    pub unusable: u64,
    /// The file ends in a cut record (its outputs hold what came before).
    pub truncated: bool,
}

/// A problem that stops the outputs of one file.
#[derive(Debug, thiserror::Error)]
pub enum DeriveError {
    /// The WARC file cannot be read.
    #[error("{0}")]
    Read(#[from] WarcError),
    /// An output cannot be written.
    #[error("{path}: {message}")]
    Write {
        /// The output.
        path: PathBuf,
        /// What happened.
        message: String,
    },
}

fn write_error(path: &Path) -> impl Fn(String) -> DeriveError + '_ {
    move |message| DeriveError::Write {
        path: path.to_path_buf(),
        message,
    }
}

/// A WET or WAT file being written: a `warcinfo` record, then one record
/// per call of [`RecordFile::push`], each its own gzip member.
struct RecordFile {
    file: AtomicFile,
    encoder: ExchangeEncoder,
    buf: Vec<u8>,
}

/// The deflate level of WET and WAT files: written once, read often.
const OUTPUT_LEVEL: u32 = 6;

impl RecordFile {
    fn create(path: &Path, description: &str, origin: &Origin) -> Result<RecordFile, DeriveError> {
        let fail = write_error(path);
        let file = AtomicFile::create(path).map_err(|e| fail(e.to_string()))?;
        let mut out = RecordFile {
            file,
            encoder: ExchangeEncoder::with_level(OUTPUT_LEVEL),
            buf: Vec::new(),
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let block = format!(
            "software: segmenter/{}\r\nisPartOf: {}\r\ndescription: {description} {}\r\n\
             format: WARC File Format 1.1\r\n",
            env!("CARGO_PKG_VERSION"),
            origin.crawl,
            origin.filename,
        );
        let date = common::timefmt::iso_millis(SystemTime::now());
        out.push(&Record {
            kind: "warcinfo",
            date: &date,
            fields: &[("WARC-Filename", &name)],
            content_type: "application/warc-fields",
            block: block.as_bytes(),
        })
        .map_err(fail)?;
        Ok(out)
    }

    fn push(&mut self, record: &Record<'_>) -> Result<(), String> {
        self.buf.clear();
        self.encoder
            .encode_record(record, &mut self.buf)
            .map_err(|e| e.to_string())?;
        self.file.write_all(&self.buf).map_err(|e| e.to_string())
    }
}

/// The outputs of one file while it is read.
struct Writers {
    index: Option<TableWriter<AtomicFile>>,
    wet: Option<RecordFile>,
    wat: Option<RecordFile>,
    paths: Outputs,
}

impl Writers {
    fn open(warc_name: &Path, wanted: Wanted, origin: &Origin) -> Result<Writers, DeriveError> {
        let paths = outputs_of(warc_name);
        let index = match wanted.index {
            true => {
                let fail = write_error(&paths.index);
                let file = AtomicFile::create(&paths.index).map_err(|e| fail(e.to_string()))?;
                Some(TableWriter::new(file).map_err(|e| fail(e.to_string()))?)
            }
            false => None,
        };
        let wet = match wanted.wet {
            true => Some(RecordFile::create(
                &paths.wet,
                "Visible text of the HTML pages of",
                origin,
            )?),
            false => None,
        };
        let wat = match wanted.wat {
            true => Some(RecordFile::create(
                &paths.wat,
                "Metadata of the records of",
                origin,
            )?),
            false => None,
        };
        Ok(Writers {
            index,
            wet,
            wat,
            paths,
        })
    }

    /// Puts every output in place.
    fn commit(self) -> Result<(), DeriveError> {
        if let Some(t) = self.index {
            let fail = write_error(&self.paths.index);
            let file = t.finish().map_err(|e| fail(e.to_string()))?;
            file.commit().map_err(|e| fail(e.to_string()))?;
        }
        for (w, path) in [(self.wet, &self.paths.wet), (self.wat, &self.paths.wat)] {
            if let Some(w) = w {
                w.file
                    .commit()
                    .map_err(|e| write_error(path)(e.to_string()))?;
            }
        }
        Ok(())
    }
}

/// Writes the `wanted` outputs of the WARC file `source` (a local copy, or
/// the file itself) beside `warc` (the file's path in its run, which names
/// the outputs). Damaged records are skipped and counted; a cut last
/// record ends the reading, and the outputs hold what came before.
pub fn derive(
    source: &Path,
    warc: &Path,
    wanted: Wanted,
    origin: &Origin,
    reader: &mut CaptureReader,
    max_block: usize,
) -> Result<FileTotals, DeriveError> {
    let mut records = WarcReader::open(source, max_block)?.resyncing();
    let mut out = Writers::open(warc, wanted, origin)?;
    let mut totals = FileTotals::default();
    let mut record = WarcRecord::default();
    loop {
        match records.read_next(&mut record) {
            Ok(true) => {
                totals.records += 1;
                one_record(&record, reader, origin, &mut out, &mut totals)?;
            }
            Ok(false) => break,
            Err(WarcError::Damaged { resumed_at, .. }) => {
                totals.damaged += 1;
                if resumed_at.is_none() {
                    break;
                }
            }
            Err(WarcError::Truncated { .. }) => {
                totals.truncated = true;
                break;
            }
            Err(e) => return Err(e.into()),
        }
    }
    out.commit()?;
    Ok(totals)
}

/// The outputs of one record.
fn one_record(
    record: &WarcRecord,
    reader: &mut CaptureReader,
    origin: &Origin,
    out: &mut Writers,
    totals: &mut FileTotals,
) -> Result<(), DeriveError> {
    let kind = record.record_type().unwrap_or_default();
    let mut facts = Facts::default();
    if matches!(kind, "response" | "revisit") {
        let url = record.target_uri().and_then(|u| Url::parse(u).ok());
        let head = capture::http_head(record);
        match (&url, &head) {
            (Some(url), Some(head)) => {
                totals.captures += 1;
                facts = reader.facts(record, head, Some(url));
                if let Some(index) = &mut out.index {
                    let mut owned = Owned::default();
                    let row = capture::row(record, head, url, &facts, origin, &mut owned);
                    index
                        .push(&row)
                        .map_err(|e| write_error(&out.paths.index)(e.to_string()))?;
                }
            }
            _ => totals.unusable += 1,
        }
        if let Some(page) = &facts.page {
            totals.pages += 1;
            totals.text_bytes += page.text.len() as u64;
            if let Some(wet) = &mut out.wet {
                push_text(wet, record, &facts, page).map_err(write_error(&out.paths.wet))?;
            }
        }
    }
    if let Some(wat) = &mut out.wat {
        let json = wat::envelope(record, &origin.filename, facts.page.as_ref());
        push_metadata(wat, record, &json.to_string()).map_err(write_error(&out.paths.wat))?;
    }
    Ok(())
}

/// The `conversion` record of a page: its title, then its text.
fn push_text(
    wet: &mut RecordFile,
    record: &WarcRecord,
    facts: &Facts,
    page: &common::extract::PageText,
) -> Result<(), String> {
    let mut block = String::with_capacity(page.text.len() + 128);
    if let Some(t) = &page.title {
        block.push_str(t);
        block.push('\n');
    }
    block.push_str(&page.text);
    let mut fields: Vec<(&str, &str)> = vec![
        ("WARC-Target-URI", record.target_uri().unwrap_or_default()),
        (
            "WARC-Refers-To",
            record.header("WARC-Record-ID").unwrap_or_default(),
        ),
    ];
    if !facts.languages.is_empty() {
        fields.push(("WARC-Identified-Content-Language", &facts.languages));
    }
    wet.push(&Record {
        kind: "conversion",
        date: record.header("WARC-Date").unwrap_or_default(),
        fields: &fields,
        content_type: "text/plain",
        block: block.as_bytes(),
    })
}

/// The `metadata` record that describes `record`.
fn push_metadata(wat: &mut RecordFile, record: &WarcRecord, json: &str) -> Result<(), String> {
    let mut fields: Vec<(&str, &str)> = Vec::with_capacity(2);
    if let Some(uri) = record.target_uri() {
        fields.push(("WARC-Target-URI", uri));
    }
    fields.push((
        "WARC-Refers-To",
        record.header("WARC-Record-ID").unwrap_or_default(),
    ));
    let now;
    let date = match record.header("WARC-Date") {
        Some(d) => d,
        None => {
            now = common::timefmt::iso_millis(SystemTime::now());
            &now
        }
    };
    wat.push(&Record {
        kind: "metadata",
        date,
        fields: &fields,
        content_type: "application/json",
        block: json.as_bytes(),
    })
}
