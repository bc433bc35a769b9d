//! Pages whose right answers are known, for the research outputs'
//! detection: texts in several languages, charset declarations that agree
//! or contradict the bytes, and articles on unrelated topics with their
//! near-duplicates (the same page with another date line, or with an ad
//! block). The texts are written for these tests; the articles are made by
//! the seeded generator from made-up topic vocabularies and common English
//! words, about 1,200 words each.

use common::testutil::Rng;
use encoding_rs::{EUC_JP, Encoding, SHIFT_JIS, UTF_8, WINDOWS_1252};

/// A page to serve: its path, `Content-Type` and bytes, and what a reader
/// must find.
#[derive(Debug, Clone)]
pub struct Labelled {
    /// Where it is served.
    pub path: String,
    /// Its `Content-Type` header.
    pub content_type: String,
    /// Its bytes.
    pub body: Vec<u8>,
    /// The charset (WHATWG name) and its source (`header`, `meta`, `bom`,
    /// `detected`, `default`), when the page checks them.
    pub charset: Option<(&'static str, &'static str)>,
    /// The languages (ISO 639-3), when the page checks them.
    pub languages: Option<&'static [&'static str]>,
}

/// Texts of more than 200 characters, one per language.
pub const LANGUAGES: &[(&str, &str)] = &[
    (
        "eng",
        "The village library opens at nine every morning except on Sundays. Children come \
         after school to borrow picture books, while their parents read the newspapers by the \
         window. Last winter the roof was repaired, and the council promised new shelves for \
         the history section before the summer holidays begin.",
    ),
    (
        "fra",
        "La bibliothèque du village ouvre à neuf heures tous les matins, sauf le dimanche. Les \
         enfants viennent après l'école emprunter des albums, pendant que leurs parents lisent \
         les journaux près de la fenêtre. L'hiver dernier, le toit a été réparé et la mairie a \
         promis de nouvelles étagères avant les vacances d'été.",
    ),
    (
        "deu",
        "Die Dorfbibliothek öffnet jeden Morgen um neun Uhr, außer am Sonntag. Die Kinder kommen \
         nach der Schule, um Bilderbücher auszuleihen, während ihre Eltern am Fenster die \
         Zeitungen lesen. Im letzten Winter wurde das Dach repariert, und die Gemeinde hat neue \
         Regale für die Geschichtsabteilung versprochen.",
    ),
    (
        "spa",
        "La biblioteca del pueblo abre a las nueve todas las mañanas, excepto los domingos. Los \
         niños vienen después de la escuela a pedir libros ilustrados, mientras sus padres leen \
         los periódicos junto a la ventana. El invierno pasado se arregló el tejado y el \
         ayuntamiento prometió estanterías nuevas antes del verano.",
    ),
    (
        "ita",
        "La biblioteca del paese apre alle nove ogni mattina, tranne la domenica. I bambini \
         arrivano dopo la scuola per prendere in prestito i libri illustrati, mentre i genitori \
         leggono i giornali vicino alla finestra. L'inverno scorso è stato riparato il tetto e \
         il comune ha promesso nuovi scaffali prima dell'estate.",
    ),
    (
        "por",
        "A biblioteca da aldeia abre às nove horas todas as manhãs, exceto aos domingos. As \
         crianças chegam depois da escola para pedir livros ilustrados, enquanto os pais leem os \
         jornais ao lado da janela. No inverno passado o telhado foi consertado e a câmara \
         prometeu estantes novas antes das férias de verão.",
    ),
    (
        "nld",
        "De dorpsbibliotheek gaat elke ochtend om negen uur open, behalve op zondag. Kinderen \
         komen na school prentenboeken lenen, terwijl hun ouders bij het raam de kranten lezen. \
         Vorige winter is het dak gerepareerd en de gemeente heeft nieuwe boekenkasten beloofd \
         voor de afdeling geschiedenis voordat de zomervakantie begint.",
    ),
    (
        "rus",
        "Деревенская библиотека открывается в девять часов каждое утро, кроме воскресенья. Дети \
         приходят после школы, чтобы взять книжки с картинками, а их родители читают газеты у \
         окна. Прошлой зимой починили крышу, и администрация обещала новые полки для отдела \
         истории до начала летних каникул.",
    ),
    (
        "jpn",
        "村の図書館は日曜日を除いて毎朝九時に開きます。子どもたちは学校の帰りに絵本を借りに来て、\
         親たちは窓のそばで新聞を読んでいます。去年の冬には屋根が修理され、町役場は夏休みが始まる前に\
         歴史の棚を新しくすると約束しました。図書館の職員はとても親切で、いつも本を探すのを手伝ってくれます。",
    ),
];

/// The language pages, a page with two languages, and a page too short to
/// judge (its languages are not checked).
pub fn language_pages() -> Vec<Labelled> {
    let mut out = Vec::new();
    for (code, text) in LANGUAGES {
        let codes: &'static [&'static str] = match *code {
            "eng" => &["eng"],
            "fra" => &["fra"],
            "deu" => &["deu"],
            "spa" => &["spa"],
            "ita" => &["ita"],
            "por" => &["por"],
            "nld" => &["nld"],
            "rus" => &["rus"],
            _ => &["jpn"],
        };
        out.push(utf8_page(
            &format!("/lang/{code}.html"),
            &format!("<p>{text}</p>"),
            codes,
        ));
    }
    let (en, fr) = (LANGUAGES[0].1, LANGUAGES[1].1);
    let both = format!("<p>{en} {en}</p>\n<p>{fr} {fr}</p>");
    out.push(utf8_page("/lang/eng-fra.html", &both, &["eng", "fra"]));
    let mut short = utf8_page("/lang/short.html", "<p>Opening hours</p>", &[]);
    short.languages = None;
    out.push(short);
    out
}

fn utf8_page(path: &str, body: &str, languages: &'static [&'static str]) -> Labelled {
    Labelled {
        path: path.to_string(),
        content_type: "text/html; charset=utf-8".to_string(),
        body: format!(
            "<!doctype html><html><head><title>t</title></head><body>{body}</body></html>"
        )
        .into_bytes(),
        charset: Some(("UTF-8", "header")),
        languages: Some(languages),
    }
}

/// A page of `text` encoded in `bytes_in`, with `meta` (a charset label,
/// as `<meta charset>`) and a `header` label in its `Content-Type`.
fn charset_page(
    path: &str,
    text: &str,
    bytes_in: &'static Encoding,
    header: Option<&str>,
    meta: Option<&str>,
    bom: bool,
    expect: (&'static str, &'static str),
) -> Labelled {
    let meta = meta.map_or(String::new(), |m| format!("<meta charset=\"{m}\">"));
    let doc = format!(
        "<!doctype html><html><head>{meta}<title>c</title></head><body><p>{text}</p></body></html>"
    );
    let mut body = if bom {
        b"\xEF\xBB\xBF".to_vec()
    } else {
        Vec::new()
    };
    body.extend_from_slice(&bytes_in.encode(&doc).0);
    Labelled {
        path: path.to_string(),
        content_type: match header {
            Some(h) => format!("text/html; charset={h}"),
            None => "text/html".to_string(),
        },
        body,
        charset: Some(expect),
        languages: None,
    }
}

/// Pages whose declarations agree with their bytes, contradict them, or
/// are missing.
pub fn charset_pages() -> Vec<Labelled> {
    let (fr, ja) = (LANGUAGES[1].1, LANGUAGES[8].1);
    vec![
        // The header says UTF-8, the meta and the bytes Shift_JIS.
        charset_page(
            "/cs/utf8-header-sjis-meta.html",
            ja,
            SHIFT_JIS,
            Some("utf-8"),
            Some("shift_jis"),
            false,
            ("Shift_JIS", "meta"),
        ),
        // The header says Latin-1, the meta and the bytes UTF-8.
        charset_page(
            "/cs/latin1-header-utf8-meta.html",
            fr,
            UTF_8,
            Some("iso-8859-1"),
            Some("utf-8"),
            false,
            ("UTF-8", "meta"),
        ),
        // The meta says UTF-8, the header and the bytes windows-1252.
        charset_page(
            "/cs/cp1252-header-utf8-meta.html",
            fr,
            WINDOWS_1252,
            Some("windows-1252"),
            Some("utf-8"),
            false,
            ("windows-1252", "header"),
        ),
        // Only the header, right.
        charset_page(
            "/cs/eucjp-header.html",
            ja,
            EUC_JP,
            Some("euc-jp"),
            None,
            false,
            ("EUC-JP", "header"),
        ),
        // A byte order mark against a Latin-1 header.
        charset_page(
            "/cs/bom-latin1-header.html",
            fr,
            UTF_8,
            Some("iso-8859-1"),
            None,
            true,
            ("UTF-8", "bom"),
        ),
        // Nothing declared.
        charset_page(
            "/cs/none-utf8.html",
            fr,
            UTF_8,
            None,
            None,
            false,
            ("UTF-8", "detected"),
        ),
        charset_page(
            "/cs/none-cp1252.html",
            fr,
            WINDOWS_1252,
            None,
            None,
            false,
            ("windows-1252", "detected"),
        ),
        charset_page(
            "/cs/none-sjis.html",
            ja,
            SHIFT_JIS,
            None,
            None,
            false,
            ("Shift_JIS", "detected"),
        ),
        charset_page(
            "/cs/none-ascii.html",
            "plain words only",
            UTF_8,
            None,
            None,
            false,
            ("UTF-8", "default"),
        ),
    ]
}

/// The words every English article shares.
const COMMON: &[&str] = &[
    "the", "a", "of", "and", "to", "in", "is", "it", "that", "for", "on", "with", "as", "was",
    "at", "by", "this", "from", "are", "be", "or", "an", "which", "has", "not", "but", "all",
    "were", "when", "there", "can", "more", "one", "their", "also", "into", "its", "only", "other",
    "some",
];

/// The vocabulary of topic `t`: 120 words of its own (made of syllables,
/// so that no two topics share one).
fn topic_words(t: usize) -> Vec<String> {
    const SYLLABLES: &[&str] = &[
        "ba", "ke", "lo", "mi", "nu", "ra", "si", "to", "vel", "dor", "gan", "pim", "sur", "tha",
        "wen", "zo", "quil", "bro", "fen", "cal",
    ];
    let mut rng = Rng::new(7_000 + t as u64);
    let mut words = std::collections::BTreeSet::new();
    while words.len() < 120 {
        let n = 2 + rng.below(2);
        let w: String = (0..n).map(|_| *rng.pick(SYLLABLES)).collect();
        // A topic's own mark: words of two topics never coincide.
        words.insert(format!("{w}{}", ["x", "q", "j", "v", "k", "z"][t % 6]));
    }
    words.into_iter().collect()
}

/// An article of about `words` words on topic `t`, the same for a seed:
/// sentences of 8 to 15 words, two in five of them common words.
fn article(t: usize, seed: u64, words: usize) -> Vec<String> {
    let mut rng = Rng::new(seed);
    let topic = topic_words(t);
    let mut lines = Vec::new();
    let mut count = 0;
    while count < words {
        let mut paragraph = String::new();
        for _ in 0..5 {
            let n = 8 + rng.below(8);
            let sentence: Vec<&str> = (0..n)
                .map(|_| {
                    if rng.chance(0.4) {
                        *rng.pick(COMMON)
                    } else {
                        rng.pick(&topic).as_str()
                    }
                })
                .collect();
            count += n;
            paragraph.push_str(&sentence.join(" "));
            paragraph.push_str(". ");
        }
        lines.push(paragraph.trim_end().to_string());
    }
    lines
}

/// An article page: its paragraphs, with `extra` inserted after the first
/// third. Its language is not checked: the articles are sentences of
/// made-up topic words for the simhash, not prose.
fn article_page(path: &str, paragraphs: &[String], extra: &str) -> Labelled {
    let mut body = String::new();
    for (i, p) in paragraphs.iter().enumerate() {
        if i == paragraphs.len() / 3 {
            body.push_str(&format!("<div class=\"extra\">{extra}</div>\n"));
        }
        body.push_str(&format!("<p>{p}</p>\n"));
    }
    let mut page = utf8_page(path, &body, &[]);
    page.languages = None;
    page
}

/// The near-duplicate pairs (paths), the unrelated pages (paths), and
/// every article page to serve.
pub struct Articles {
    /// Every article page.
    pub pages: Vec<Labelled>,
    /// Pairs of paths of a page and its near-duplicate.
    pub near_duplicates: Vec<(String, String)>,
    /// Paths of pages on unrelated topics, one per topic.
    pub unrelated: Vec<String>,
}

/// One article per topic; for the first three, the same page with another
/// date line and with an ad block.
pub fn articles() -> Articles {
    let mut out = Articles {
        pages: Vec::new(),
        near_duplicates: Vec::new(),
        unrelated: Vec::new(),
    };
    let ad =
        "Advertisement: save on flights to Lisbon this week, book with our travel partner today";
    for t in 0..6 {
        let text = article(t, 100 + t as u64, 1200);
        let path = format!("/article/{t}.html");
        out.pages.push(article_page(
            &path,
            &text,
            "Published on 3 March 2026 by the editors",
        ));
        out.unrelated.push(path.clone());
        if t < 3 {
            let redated = format!("/article/{t}-redated.html");
            out.pages.push(article_page(
                &redated,
                &text,
                "Published on 17 August 2025 by the editors",
            ));
            out.near_duplicates.push((path.clone(), redated));
            let with_ad = format!("/article/{t}-ad.html");
            let extra =
                format!("Published on 3 March 2026 by the editors</div><div class=\"ad\">{ad}");
            out.pages.push(article_page(&with_ad, &text, &extra));
            out.near_duplicates.push((path, with_ad));
        }
    }
    out
}
