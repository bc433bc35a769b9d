//! The languages of a page's text, as ISO 639-3 codes (`eng`, `fra`,
//! `jpn`), the form of Common Crawl's `content_languages`.
//!
//! The detector is `whatlang`: trigram profiles of 69 languages compiled
//! into the crate (no model file to ship or load), pure Rust, and about a
//! millisecond for a page's text. Common Crawl uses CLD2, a C++ library
//! (bindings would add a C++ build); `lingua` is more accurate on short
//! texts but its models weigh hundreds of megabytes.
//!
//! `whatlang` answers one language for a text. A page in several languages
//! is cut along its lines into pieces of at least [`PIECE_CHARS`] bytes and
//! at most about [`MAX_PIECES`] of them (an eighth of the text is finer
//! than the fifth a language needs to be listed, and each call of the
//! detector compares the piece with every profile of its script, a cost
//! that does not shrink with the piece: pieces of 300 bytes made the
//! detector 70 % of the Parquet index's CPU on 10 KB pages); each piece's
//! language, when the detector deems it reliable, gets the piece's length;
//! the languages holding at least a fifth of the detected text are the
//! page's, largest share first, at most three. A text of fewer than
//! [`MIN_CHARS`] letters gets no language.

use whatlang::Lang;

/// Texts with fewer letters than this get no language.
pub const MIN_CHARS: usize = 20;
/// Pieces of text are cut at line ends once they are this long (in bytes)
/// and the text's length over [`MAX_PIECES`].
const PIECE_CHARS: usize = 300;
/// About how many pieces a long text is cut into.
const MAX_PIECES: usize = 8;
/// Only this much of a long text is looked at.
const MAX_CHARS: usize = 100_000;
/// A language is listed when it holds this share of the detected text.
const MIN_SHARE: f64 = 0.2;
/// Most languages listed.
const MAX_LANGUAGES: usize = 3;

/// The languages of `text`, largest share first, as ISO 639-3 codes joined
/// with `,` (empty: none detected).
pub fn languages(text: &str, out: &mut String) {
    out.clear();
    let text = &text[..floor_char_boundary(text, MAX_CHARS)];
    let letters = text
        .chars()
        .filter(|c| c.is_alphabetic())
        .take(MIN_CHARS)
        .count();
    if letters < MIN_CHARS {
        return;
    }
    let mut shares: Vec<(Lang, usize)> = Vec::new();
    let piece_len = PIECE_CHARS.max(text.len() / MAX_PIECES);
    let mut start = 0;
    let mut pieces = 0;
    for (i, _) in text.match_indices('\n') {
        if i - start >= piece_len {
            detect_piece(&text[start..i], &mut shares);
            pieces += 1;
            start = i + 1;
        }
    }
    let rest = &text[start..];
    // A short tail counts only when it is the only piece.
    if pieces == 0 || rest.len() >= piece_len / 2 {
        detect_piece(rest, &mut shares);
    }
    if shares.is_empty() && pieces > 0 {
        // No piece was reliable: the whole text's guess, if reliable.
        detect_piece(text, &mut shares);
    }
    if shares.is_empty() {
        return;
    }
    let total: usize = shares.iter().map(|(_, n)| n).sum();
    shares.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
    for (lang, n) in shares.iter().take(MAX_LANGUAGES) {
        if (*n as f64) < MIN_SHARE * total as f64 {
            break;
        }
        if !out.is_empty() {
            out.push(',');
        }
        out.push_str(lang.code());
    }
}

/// Adds the length of `piece` to its language's share, if the detector
/// is sure of it.
fn detect_piece(piece: &str, shares: &mut Vec<(Lang, usize)>) {
    if let Some(info) = whatlang::detect(piece)
        && info.is_reliable()
    {
        match shares.iter_mut().find(|(l, _)| *l == info.lang()) {
            Some((_, n)) => *n += piece.len(),
            None => shares.push((info.lang(), piece.len())),
        }
    }
}

/// The largest char boundary of `s` at or below `at`.
fn floor_char_boundary(s: &str, at: usize) -> usize {
    if at >= s.len() {
        return s.len();
    }
    (0..=at).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn langs(text: &str) -> String {
        let mut out = String::new();
        languages(text, &mut out);
        out
    }

    #[test]
    fn one_language_and_two() {
        let en = "The committee met on Tuesday to discuss the budget for the coming year, \
                  and most members agreed that the library should stay open in the evenings.";
        let fr = "Le comité s'est réuni mardi pour discuter du budget de l'année prochaine, \
                  et la plupart des membres ont convenu que la bibliothèque resterait ouverte le soir.";
        assert_eq!(langs(en), "eng");
        assert_eq!(langs(fr), "fra");
        let both = format!("{en} {en} {en}\n{fr} {fr} {fr}\n");
        let found = langs(&both);
        assert!(found == "eng,fra" || found == "fra,eng", "{found}");
        assert_eq!(langs("Home | About"), "");
    }
}
