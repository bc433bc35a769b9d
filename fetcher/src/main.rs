fn main() {
    eprintln!("fetcher: not built yet");
    std::process::exit(1);
}
