//! The upload side of `scripts/bench-store.sh`: writes FILE... to the WARC
//! store at URL (`s3://...`, credentials from the environment) as
//! `bench/NAME`, or with `local DIR` copies them into DIR and syncs each,
//! as the fetcher's own files are; prints `BYTES WALL_SECONDS CPU_SECONDS`.
//!
//! Usage: `bench_store URL FILE...` or `bench_store local DIR FILE...`

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes into the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(ru.ru_utime) + t(ru.ru_stime)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: bench_store URL FILE... | bench_store local DIR FILE...");
        std::process::exit(2);
    }
    let (cpu0, start) = (cpu_seconds(), Instant::now());
    let mut bytes = 0u64;
    if args[0] == "local" {
        let dir = PathBuf::from(&args[1]);
        for f in &args[2..] {
            let data = std::fs::read(f).expect("read");
            let to = dir.join(Path::new(f).file_name().expect("a file name"));
            let mut out = std::fs::File::create(&to).expect("create");
            out.write_all(&data).expect("write");
            out.sync_all().expect("sync");
            bytes += data.len() as u64;
        }
    } else {
        let store = common::store::WarcStore::open(&args[0]).unwrap_or_else(|e| {
            eprintln!("bench_store: {e}");
            std::process::exit(1)
        });
        for f in &args[1..] {
            let path = Path::new(f);
            let name = path.file_name().expect("a file name").to_string_lossy();
            let up = store
                .upload(path, &store.key_of(Path::new(&format!("bench/{name}"))))
                .unwrap_or_else(|e| {
                    eprintln!("bench_store: {e}");
                    std::process::exit(1)
                });
            bytes += up.size;
        }
    }
    println!(
        "{bytes} {:.3} {:.3}",
        start.elapsed().as_secs_f64(),
        cpu_seconds() - cpu0
    );
}
