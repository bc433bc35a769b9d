//! The whole of `crawl.toml` checked the same way by both programs,
//! whichever reads it first: every section and key is one a program reads
//! (a misspelt one is refused with the closest valid key and the list of
//! the section's keys), and every value of `[fetcher]` and `[segmenter]`
//! has the type its program reads (the other sections' values are typed by
//! [`super::CrawlConfig`] itself). Ranges (a number of threads, a share)
//! are checked by the program that uses the setting.

use serde::Deserialize;
use serde::de::{self, DeserializeOwned, Visitor};

use super::fetcher::FetcherOptions;
use super::segmenter::SegmenterOptions;
use super::{
    AgentConfig, CrawlConfig, CrawlSection, FilterConfig, POLITENESS_KEYS, ScopeConfig,
    SharedOptions,
};

/// Each section of the file with the keys it takes, in the order the
/// guide lists the sections.
fn sections() -> Vec<(&'static str, Vec<&'static str>)> {
    let mut fetcher = fields_of::<FetcherOptions>().to_vec();
    fetcher.extend(POLITENESS_KEYS);
    vec![
        ("agent", fields_of::<AgentConfig>().to_vec()),
        ("scope", fields_of::<ScopeConfig>().to_vec()),
        ("filter", fields_of::<FilterConfig>().to_vec()),
        ("crawl", fields_of::<CrawlSection>().to_vec()),
        ("fetcher", fetcher),
        ("segmenter", fields_of::<SegmenterOptions>().to_vec()),
    ]
}

/// Checks the sections and keys of the file's `table`: the problem, said
/// for a user, if one is not read by either program.
pub(super) fn keys(table: &toml::Table) -> Result<(), String> {
    let sections = sections();
    let names: Vec<&str> = sections.iter().map(|(s, _)| *s).collect();
    for (name, value) in table {
        let Some((_, keys)) = sections.iter().find(|(s, _)| s == name) else {
            let mut why = match value {
                toml::Value::Table(_) => format!("[{name}]: not a section of crawl.toml"),
                _ => format!("`{name}` is outside any section"),
            };
            if let Some(close) = closest(name, &names) {
                why.push_str(&format!("; did you mean [{close}]?"));
            } else if let Some(home) = home_of(name, &sections) {
                why.push_str(&format!("; it is a key of {home}"));
            }
            return Err(format!("{why} The sections are [{}].", names.join("], [")));
        };
        let toml::Value::Table(section) = value else {
            return Err(format!(
                "`{name}` must be a section ([{name}] on a line of its own, its keys below it)"
            ));
        };
        for key in section.keys() {
            if keys.contains(&key.as_str()) {
                continue;
            }
            let mut why = format!("[{name}]: unknown key `{key}`");
            if let Some(close) = closest(key, keys) {
                why.push_str(&format!("; did you mean `{close}`?"));
            } else if let Some(home) = home_of(key, &sections) {
                why.push_str(&format!("; it is a key of {home}"));
            }
            let mut list = keys.clone();
            list.sort_unstable();
            return Err(format!(
                "{why} The keys of [{name}] are {}.",
                list.join(", ")
            ));
        }
    }
    Ok(())
}

/// Checks that every value of the programs' own sections has the type its
/// program reads (`threads = "many"` is refused by both programs).
pub(super) fn values(cfg: &CrawlConfig) -> Result<(), String> {
    let (politeness, own): (toml::Table, toml::Table) = cfg
        .fetcher
        .clone()
        .into_iter()
        .partition(|(k, _)| POLITENESS_KEYS.contains(&k.as_str()));
    typed::<SharedOptions>("fetcher", &politeness)?;
    typed::<FetcherOptions>("fetcher", &own)?;
    typed::<SegmenterOptions>("segmenter", &cfg.segmenter)
}

/// Each key of `table` (section `name`) read alone as the struct `T`
/// takes it: the first that does not read, said with its value.
fn typed<T: DeserializeOwned>(name: &str, table: &toml::Table) -> Result<(), String> {
    for (key, value) in table {
        let one = toml::Table::from_iter([(key.clone(), value.clone())]);
        if let Err(e) = T::deserialize(toml::Value::Table(one)) {
            let text = value.to_string();
            let shown = if text.chars().count() > 60 {
                format!("{}…", text.chars().take(60).collect::<String>())
            } else {
                text
            };
            let why = e.to_string();
            let why = why.lines().next().unwrap_or_default();
            return Err(format!("[{name}] {key} = {shown}: {why}"));
        }
    }
    Ok(())
}

/// The valid name closest to a misspelt `name`, if one is close enough
/// to be what was meant (at most a third of its letters changed, and no
/// more than three).
fn closest<'a>(name: &str, valid: &[&'a str]) -> Option<&'a str> {
    let most = (name.chars().count() / 3).clamp(1, 3);
    valid
        .iter()
        .map(|v| (strsim::damerau_levenshtein(name, v), *v))
        .filter(|(d, _)| *d <= most)
        .min()
        .map(|(_, v)| v)
}

/// `[fetcher]` (or `[fetcher] or [segmenter]`): the sections that take
/// `key`, for a key put in the wrong one.
fn home_of(key: &str, sections: &[(&'static str, Vec<&'static str>)]) -> Option<String> {
    let homes: Vec<String> = sections
        .iter()
        .filter(|(_, keys)| keys.contains(&key))
        .map(|(s, _)| format!("[{s}]"))
        .collect();
    (!homes.is_empty()).then(|| homes.join(" and "))
}

/// The keys serde's derive gives the struct `T`: the names it reads.
fn fields_of<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    let mut fields: &'static [&'static str] = &[];
    // The derive hands its field names to `deserialize_struct`; the
    // deserializer keeps them and stops there.
    let _ = T::deserialize(FieldNames(&mut fields));
    fields
}

/// A deserializer that only records the field names of the struct asked
/// for (see [`fields_of`]).
struct FieldNames<'a>(&'a mut &'static [&'static str]);

impl<'de> de::Deserializer<'de> for FieldNames<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("only a struct's field names are read"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = fields;
        Err(de::Error::custom("only a struct's field names are read"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map enum identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys_of(text: &str) -> Result<(), String> {
        keys(&toml::from_str(text).unwrap())
    }

    #[test]
    fn every_section_lists_the_keys_its_program_reads() {
        let sections = sections();
        let fetcher = &sections.iter().find(|(s, _)| *s == "fetcher").unwrap().1;
        for key in [
            "min_delay",
            "delay_factor",
            "backoff_max",
            "threads",
            "hosts_file",
        ] {
            assert!(fetcher.contains(&key), "{key}: {fetcher:?}");
        }
        let crawl = &sections.iter().find(|(s, _)| *s == "crawl").unwrap().1;
        assert!(crawl.contains(&"min_free_disk"), "{crawl:?}");
        assert_eq!(fields_of::<CrawlConfig>().len(), 6);
    }

    #[test]
    fn a_misspelt_key_is_refused_with_the_closest_one_and_a_true_list() {
        let err = keys_of("[fetcher]\nmin_delai = \"1s\"\n").unwrap_err();
        assert!(
            err.starts_with("[fetcher]: unknown key `min_delai`; did you mean `min_delay`?"),
            "{err}"
        );
        for key in ["min_delay", "delay_factor", "backoff_max", "threads"] {
            assert!(err.contains(key), "{key} missing from: {err}");
        }
        let err = keys_of("[fetcher]\nmin_free_disk = \"1GB\"\n").unwrap_err();
        assert!(err.contains("it is a key of [crawl]"), "{err}");
        let err = keys_of("[agnet]\nname = \"x\"\n").unwrap_err();
        assert!(
            err.contains("[agnet]: not a section of crawl.toml; did you mean [agent]?"),
            "{err}"
        );
        let err = keys_of("threads = 4\n").unwrap_err();
        assert!(
            err.contains("it is a key of [fetcher] and [segmenter]"),
            "{err}"
        );
        assert!(
            keys_of("[fetcher]\nmin_delay = 1\nthreads = 4\n[segmenter]\nthreads = 2\n").is_ok()
        );
    }

    #[test]
    fn values_of_either_programs_section_have_their_type() {
        let cfg = |text: &str| toml::from_str::<CrawlConfig>(text).unwrap();
        let err = values(&cfg("[fetcher]\nthreads = \"many\"\n")).unwrap_err();
        assert!(
            err.starts_with("[fetcher] threads = \"many\": invalid type"),
            "{err}"
        );
        let err = values(&cfg("[segmenter]\nthreads = 0\n")).unwrap_err();
        assert!(err.starts_with("[segmenter] threads = 0: "), "{err}");
        let err = values(&cfg("[fetcher]\nmin_delay = \"soon\"\n")).unwrap_err();
        assert!(err.starts_with("[fetcher] min_delay = \"soon\": "), "{err}");
        assert!(values(&cfg("[fetcher]\nmin_delay = \"2s\"\nkey = \"domain\"\n")).is_ok());
    }
}
