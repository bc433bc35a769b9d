fn main() {
    eprintln!("segmenter: not built yet");
    std::process::exit(1);
}
