// The fetcher's HTTP code, written on another branch, calls into `robots`.
#[allow(dead_code)]
mod robots;

fn main() {
    eprintln!("fetcher: not built yet");
    std::process::exit(1);
}
