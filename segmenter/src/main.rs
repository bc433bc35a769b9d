// The link extractor is used by the scanner of `segmenter run`; until that
// lands on this branch nothing in the binary calls it.
#[allow(dead_code)]
mod extract;

fn main() {
    eprintln!("segmenter: not built yet");
    std::process::exit(1);
}
