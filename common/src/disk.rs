//! Free disk space and the floor the programs keep above it
//! (`[crawl] min_free_disk`): the fetcher ends a round cleanly before the
//! free space of the crawl directory's filesystem falls below the floor,
//! and the segmenter refuses to start a round that would not fit; both say
//! what to free and how much. A full disk is then never met in the middle
//! of a write.
//!
//! ```
//! use common::disk::{DiskFloor, space};
//! let floor: DiskFloor = "5%".parse().unwrap();
//! let here = space(&std::env::temp_dir()).unwrap();
//! assert!(floor.bytes(here.total) <= here.total / 20 + 1);
//! assert_eq!("1GB".parse::<DiskFloor>().unwrap().bytes(here.total), 1_000_000_000);
//! ```

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// The free space to keep: bytes, or a share of the filesystem.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DiskFloor {
    /// This many bytes (0: no floor).
    Bytes(u64),
    /// This percentage of the filesystem's size.
    Percent(f64),
}

/// The default floor: 1 GB, about one WARC file at its default roll-over
/// size, so that the requests in flight when the floor is met, the
/// leftover, the segmenter's round and the logs still find room.
pub const DEFAULT_FLOOR: DiskFloor = DiskFloor::Bytes(1_000_000_000);

impl DiskFloor {
    /// The floor in bytes on a filesystem of `total` bytes.
    pub fn bytes(&self, total: u64) -> u64 {
        match *self {
            DiskFloor::Bytes(b) => b,
            DiskFloor::Percent(p) => (total as f64 * p / 100.0).ceil() as u64,
        }
    }

    /// True when there is no floor (0 bytes or 0 %).
    pub fn is_off(&self) -> bool {
        match *self {
            DiskFloor::Bytes(b) => b == 0,
            DiskFloor::Percent(p) => p <= 0.0,
        }
    }
}

impl std::str::FromStr for DiskFloor {
    type Err = String;
    fn from_str(s: &str) -> Result<DiskFloor, String> {
        let t = s.trim();
        if let Some(p) = t.strip_suffix('%') {
            let p: f64 = p.trim().parse().map_err(|_| {
                format!("`{s}` is not a percentage or a size (examples: 5%, 5GB, 500MiB)")
            })?;
            if !(0.0..100.0).contains(&p) {
                return Err(format!("`{s}`: a percentage from 0 to less than 100"));
            }
            return Ok(DiskFloor::Percent(p));
        }
        crate::human::parse_size(t).map(DiskFloor::Bytes)
    }
}

impl<'de> serde::Deserialize<'de> for DiskFloor {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<DiskFloor, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Bytes(u64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Bytes(n) => Ok(DiskFloor::Bytes(n)),
            Raw::Text(s) => s.parse().map_err(serde::de::Error::custom),
        }
    }
}

impl fmt::Display for DiskFloor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            DiskFloor::Bytes(b) => f.write_str(&crate::human::bytes_precise(b)),
            DiskFloor::Percent(p) => write!(f, "{p}%"),
        }
    }
}

/// The space of a filesystem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Space {
    /// Bytes an unprivileged process may still write.
    pub free: u64,
    /// The filesystem's size.
    pub total: u64,
}

/// The space of the filesystem holding `path` (`statvfs`).
pub fn space(path: &Path) -> io::Result<Space> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in the path"))?;
    // SAFETY: `c` is a valid NUL-terminated path; `st` is a plain struct
    // that statvfs fills when it returns 0.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let unit = st.f_frsize as u64;
    Ok(Space {
        free: (st.f_bavail as u64).saturating_mul(unit),
        total: (st.f_blocks as u64).saturating_mul(unit),
    })
}

/// Free space that would fall below the floor: where, how much is free,
/// the floor, and what the step needs besides.
#[derive(Debug, Clone, PartialEq)]
pub struct Shortage {
    /// A path on the filesystem.
    pub path: PathBuf,
    /// Bytes free there.
    pub free: u64,
    /// The floor, in bytes.
    pub floor: u64,
    /// How the floor was set.
    pub setting: DiskFloor,
    /// Bytes the step needs besides the floor (0: none estimated).
    pub need: u64,
}

impl Shortage {
    /// Bytes to free so that the step fits above the floor.
    pub fn to_free(&self) -> u64 {
        (self.floor + self.need).saturating_sub(self.free)
    }
}

impl fmt::Display for Shortage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} free on its filesystem, ",
            self.path.display(),
            crate::human::bytes_precise(self.free)
        )?;
        if self.need > 0 {
            write!(
                f,
                "{} needed besides ",
                crate::human::bytes_precise(self.need)
            )?;
        } else {
            f.write_str("below ")?;
        }
        write!(
            f,
            "the free-disk floor min_free_disk = {} ({}); free at least {} there (move \
             fetched WARC files elsewhere once archived, or delete old logs), or lower \
             min_free_disk, then run again",
            self.setting,
            crate::human::bytes_precise(self.floor),
            crate::human::bytes_precise(self.to_free().max(1))
        )
    }
}

/// Checks that `path`'s filesystem keeps `need` bytes more than `floor`
/// free; the shortage if it does not. No floor, no check.
pub fn check(path: &Path, floor: DiskFloor, need: u64) -> io::Result<Option<Shortage>> {
    if floor.is_off() && need == 0 {
        return Ok(None);
    }
    let s = space(path)?;
    let floor_bytes = floor.bytes(s.total);
    Ok(
        (s.free < floor_bytes.saturating_add(need)).then(|| Shortage {
            path: path.to_path_buf(),
            free: s.free,
            floor: floor_bytes,
            setting: floor,
            need,
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floors_parse_as_sizes_or_percentages() {
        assert_eq!("5GB".parse(), Ok(DiskFloor::Bytes(5_000_000_000)));
        assert_eq!("2.5%".parse(), Ok(DiskFloor::Percent(2.5)));
        assert_eq!("0".parse(), Ok(DiskFloor::Bytes(0)));
        assert!("0".parse::<DiskFloor>().unwrap().is_off());
        assert!("150%".parse::<DiskFloor>().is_err());
        assert!("lots".parse::<DiskFloor>().is_err());
        assert_eq!(DiskFloor::Percent(10.0).bytes(1000), 100);
        let t: toml::Table = toml::from_str("a = \"3%\"\nb = 4096").unwrap();
        let a: DiskFloor = t["a"].clone().try_into().unwrap();
        let b: DiskFloor = t["b"].clone().try_into().unwrap();
        assert_eq!((a, b), (DiskFloor::Percent(3.0), DiskFloor::Bytes(4096)));
    }

    #[test]
    fn a_shortage_says_what_to_free() {
        let dir = std::env::temp_dir();
        assert_eq!(check(&dir, DiskFloor::Bytes(0), 0).unwrap(), None);
        let s = check(&dir, DiskFloor::Bytes(u64::MAX / 4), 10)
            .unwrap()
            .unwrap();
        assert_eq!(s.to_free(), u64::MAX / 4 + 10 - s.free);
        let text = s.to_string();
        assert!(
            text.contains("free at least") && text.contains("min_free_disk"),
            "{text}"
        );
    }
}
