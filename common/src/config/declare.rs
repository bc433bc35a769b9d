//! How a program declares its settings: [`options!`](crate::options), one
//! list per program in which each setting is written once, with its flag,
//! its key, its `--help` text and its default, and the traits that turn a
//! setting as given into the value the program reads ([`Layer`],
//! [`Given`], [`Defaulted`], [`Declared`]).

use std::num::{NonZeroU32, NonZeroU64, NonZeroUsize};
use std::path::PathBuf;
use std::time::Duration;

use super::{DurationValue, SizeValue};

/// How one value of a setting is laid over another: a flag's value over
/// the one from `crawl.toml` (see [`options!`](crate::options)).
pub trait Layer {
    /// `self` if it was given, else `under`.
    fn or(self, under: Self) -> Self;
}

impl<T> Layer for Option<T> {
    fn or(self, under: Self) -> Self {
        Option::or(self, under)
    }
}

/// A switch: on if the flag or the file turns it on.
impl Layer for bool {
    fn or(self, under: bool) -> bool {
        self || under
    }
}

/// A list: the flag's items are added to the file's.
impl<T> Layer for Vec<T> {
    fn or(self, mut under: Self) -> Self {
        under.extend(self);
        under
    }
}

/// A setting as given (by a flag or a key) turned into the value the
/// program reads: a [`DurationValue`] into a [`Duration`], a
/// [`SizeValue`] into bytes, a non-zero number into a number; other
/// types as they are.
pub trait Given {
    /// The value the program reads.
    type Value;
    /// That value.
    fn value(self) -> Self::Value;
}

impl Given for DurationValue {
    type Value = Duration;
    fn value(self) -> Duration {
        self.0
    }
}

impl Given for SizeValue {
    type Value = u64;
    fn value(self) -> u64 {
        self.0
    }
}

/// Types whose value is read as it is given.
macro_rules! given_as_is {
    ($($t:ty),*) => {
        $(impl Given for $t {
            type Value = $t;
            fn value(self) -> $t {
                self
            }
        })*
    };
}

given_as_is!(
    bool,
    f64,
    i64,
    u32,
    u64,
    usize,
    String,
    PathBuf,
    crate::disk::DiskFloor,
    super::fetcher::KeyMode,
    super::segmenter::UrlOrder
);

/// Non-zero numbers (the type refuses 0 as it is given) read as numbers.
macro_rules! given_non_zero {
    ($($t:ty => $n:ty),*) => {
        $(impl Given for $t {
            type Value = $n;
            fn value(self) -> $n {
                self.get()
            }
        })*
    };
}

given_non_zero!(NonZeroU32 => u32, NonZeroU64 => u64, NonZeroUsize => usize);

/// An optional setting without a declared default stays optional.
impl<T: Given> Given for Option<T> {
    type Value = Option<T::Value>;
    fn value(self) -> Option<T::Value> {
        self.map(Given::value)
    }
}

/// A list's items, each read.
impl<T: Given> Given for Vec<T> {
    type Value = Vec<T::Value>;
    fn value(self) -> Vec<T::Value> {
        self.into_iter().map(Given::value).collect()
    }
}

/// An optional setting with a declared default (`= DEFAULT` in
/// [`options!`](crate::options)): the value given, else the default.
pub trait Defaulted {
    /// The value the program reads (never optional).
    type Value;
    /// The value given, else `default`.
    fn or_default(self, default: Self::Value) -> Self::Value;
}

impl<T: Given> Defaulted for Option<T> {
    type Value = T::Value;
    fn or_default(self, default: T::Value) -> T::Value {
        self.map_or(default, Given::value)
    }
}

/// A list of settings declared with [`options!`](crate::options), as a
/// check of the documentation sees it: its keys, which of them have a
/// declared default, and the value the program reads for each.
pub trait Declared: serde::de::DeserializeOwned + Default {
    /// Each key (the field's name, which is also the flag's id), and
    /// whether a default is declared for it.
    fn keys() -> Vec<(&'static str, bool)>;
    /// The value the program reads for `key` from these settings (the one
    /// given, else its declared default), in its `Debug` form; `None` for
    /// a key not in the list. `Self::default().value_of(key)` is the
    /// declared default.
    fn value_of(self, key: &str) -> Option<String>;
}

/// Defines the one list of a program's settings: each setting written
/// once, with its flag, its key in the program's section of `crawl.toml`,
/// its `--help` text and, when it has one, its default (`= DEFAULT`, of
/// the type the program reads: a `Duration` for a [`DurationValue`]).
///
/// It makes two structs. The first (`Example` below) derives
/// [`clap::Args`] (doc comments are the `--help` text, which names the
/// default as `[default: ...]`; a field `max_body` is the flag
/// `--max-body`) and [`serde::Deserialize`] (the key `max_body`), with
/// `Option` fields (`bool` for switches, `Vec` for lists); its method
/// `or(self, under)` lays the flags over the file field by field
/// ([`Layer`]). The second (`ExampleValues`), made by `values()`, holds
/// what the program reads: each setting given, else its default (no longer
/// an `Option`), in the type the program reads ([`Given`]). A setting
/// without a default stays an `Option` (its absence means something: no
/// limit, the environment's proxy...). Range checks come after, in one
/// place per program (its `settings` module).
///
/// ```
/// use std::time::Duration;
/// use common::config::DurationValue;
///
/// common::options! {
///     /// The example's settings.
///     pub struct Example => ExampleValues {
///         /// Worker threads [default: 4].
///         #[arg(long, value_name = "N")]
///         pub threads: Option<usize> = 4,
///         /// Longest wait [default: 10s].
///         #[arg(long, value_name = "DURATION")]
///         pub wait: Option<DurationValue> = Duration::from_secs(10),
///         /// A proxy [default: none].
///         #[arg(long, value_name = "URL")]
///         pub proxy: Option<String>,
///     }
/// }
/// let flags = Example { threads: None, wait: None, proxy: None };
/// let file: Example = toml::from_str("threads = 8").unwrap();
/// let values = flags.or(file).values();
/// assert_eq!(values.threads, 8);
/// assert_eq!(values.wait, Duration::from_secs(10));
/// assert_eq!(values.proxy, None);
/// ```
#[macro_export]
macro_rules! options {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident => $values:ident {
            $(
                $(#[doc = $doc:literal])*
                #[arg($($arg:tt)*)]
                $fvis:vis $field:ident : $ty:ty $(= $default:expr)?
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, clap::Args, serde::Deserialize)]
        #[serde(default, deny_unknown_fields)]
        $vis struct $name {
            $( $(#[doc = $doc])* #[arg($($arg)*)] $fvis $field : $ty ),*
        }

        #[doc = concat!(
            "The settings of [`", stringify!($name), "`] as the program reads them: ",
            "each one given, else its declared default (one without a default stays ",
            "optional)."
        )]
        #[derive(Debug, Clone, PartialEq)]
        $vis struct $values {
            $( $(#[doc = $doc])* $fvis $field : $crate::__setting!(type $ty $(, $default)?) ),*
        }

        impl $name {
            /// Each setting from `self` (the flags) if given there, else from
            /// `under` (`crawl.toml`).
            $vis fn or(self, under: Self) -> Self {
                Self {
                    $( $field: $crate::config::Layer::or(self.$field, under.$field) ),*
                }
            }

            /// Each setting as given, else its declared default.
            $vis fn values(self) -> $values {
                $values {
                    $( $field: $crate::__setting!(value self.$field $(, $default)?) ),*
                }
            }
        }

        impl $crate::config::Declared for $name {
            fn keys() -> Vec<(&'static str, bool)> {
                vec![ $( (stringify!($field), $crate::__setting!(declared $($default)?)) ),* ]
            }

            fn value_of(self, key: &str) -> Option<String> {
                let values = self.values();
                match key {
                    $( stringify!($field) => Some(format!("{:?}", values.$field)), )*
                    _ => None,
                }
            }
        }
    };
}

/// The parts of [`options!`](crate::options) that depend on whether a
/// setting has a declared default.
#[doc(hidden)]
#[macro_export]
macro_rules! __setting {
    (type $ty:ty) => {
        <$ty as $crate::config::Given>::Value
    };
    (type $ty:ty, $default:expr) => {
        <$ty as $crate::config::Defaulted>::Value
    };
    (value $given:expr) => {
        $crate::config::Given::value($given)
    };
    (value $given:expr, $default:expr) => {
        $crate::config::Defaulted::or_default($given, $default)
    };
    (declared) => {
        false
    };
    (declared $default:expr) => {
        true
    };
}
