//! Which proxy requests go through: `--proxy` (or `proxy` in crawl.toml),
//! else the usual environment variables, and which names bypass it
//! (`--no-proxy`, else `NO_PROXY`).
//!
//! An `http` URL is asked of the proxy in absolute form (`GET
//! http://host/path HTTP/1.1`); an `https` URL through a `CONNECT host:port`
//! tunnel (see [`crate::transport`]). SOCKS and `https://` proxies are
//! refused at start, with the way out, rather than failing every request.

/// The environment variables read for a proxy, in order (the first set
/// wins; a lower-case name before its upper-case one, as curl does).
pub const PROXY_VARIABLES: [&str; 6] = [
    "all_proxy",
    "ALL_PROXY",
    "https_proxy",
    "HTTPS_PROXY",
    "http_proxy",
    "HTTP_PROXY",
];

/// The environment variables read for the names that bypass the proxy.
pub const NO_PROXY_VARIABLES: [&str; 2] = ["no_proxy", "NO_PROXY"];

/// An HTTP proxy: where it is, its credentials, and the names that bypass it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proxy {
    /// Host name or address.
    pub host: String,
    /// Port.
    pub port: u16,
    /// User name, if the proxy asks for credentials.
    pub username: Option<String>,
    /// Password.
    pub password: Option<String>,
    /// Names that bypass the proxy, lower case: each one and every name
    /// under it (`*` for all).
    pub no_proxy: Vec<String>,
}

impl Proxy {
    /// True if requests to `host` go directly, not through the proxy.
    pub fn bypasses(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        self.no_proxy.iter().any(|name| {
            name == "*"
                || host == *name
                || (host.len() > name.len()
                    && host.ends_with(name.as_str())
                    && host.as_bytes()[host.len() - name.len() - 1] == b'.')
        })
    }

    /// The `Proxy-Authorization` header line (with its CRLF), when the
    /// proxy has credentials.
    pub fn authorization(&self) -> Option<String> {
        if self.username.is_none() && self.password.is_none() {
            return None;
        }
        let user = self.username.as_deref().unwrap_or("");
        let pass = self.password.as_deref().unwrap_or("");
        Some(format!("Proxy-Authorization: {}\r\n", basic(user, pass)))
    }
}

/// The value of an `Authorization` (or `Proxy-Authorization`) header with
/// these credentials: `Basic` and their base64.
pub fn basic(user: &str, pass: &str) -> String {
    format!("Basic {}", base64(format!("{user}:{pass}").as_bytes()))
}

/// Standard base64 with padding (RFC 4648), for proxy credentials.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The chosen proxy.
#[derive(Debug, Clone)]
pub struct ProxyChoice {
    /// The proxy requests go through.
    pub proxy: Proxy,
    /// The proxy's URL without credentials, for the log.
    pub shown: String,
    /// Where it was found: `--proxy` or the name of an environment variable.
    pub source: String,
    /// The names that bypass it.
    pub no_proxy: Vec<String>,
}

impl ProxyChoice {
    /// One line for the run's log.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "requests go through the proxy {} (from {}); http URLs in absolute form, https by CONNECT",
            self.shown, self.source
        );
        if !self.no_proxy.is_empty() {
            s.push_str(&format!("; not for {} (no_proxy)", self.no_proxy.join(",")));
        }
        s
    }
}

/// The proxy of a run: `flag` (`--proxy`/`proxy`; `none` for none, whatever
/// the environment says), else the first of [`PROXY_VARIABLES`] that is set
/// and not empty; with the names of `no_proxy_flag`, else of
/// [`NO_PROXY_VARIABLES`]. `env` reads a variable.
pub fn choose(
    flag: Option<&str>,
    no_proxy_flag: Option<&str>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<ProxyChoice>, String> {
    let found = match flag {
        Some(v) if v.eq_ignore_ascii_case("none") || v.is_empty() => return Ok(None),
        Some(v) => Some((v.to_string(), "--proxy".to_string())),
        None => PROXY_VARIABLES.iter().find_map(|name| {
            env(name)
                .filter(|v| !v.trim().is_empty())
                .map(|v| (v, name.to_string()))
        }),
    };
    let Some((value, source)) = found else {
        return Ok(None);
    };
    let no_proxy_list = match no_proxy_flag {
        Some(v) => v.to_string(),
        None => NO_PROXY_VARIABLES
            .iter()
            .find_map(|name| env(name))
            .unwrap_or_default(),
    };
    let no_proxy: Vec<String> = no_proxy_list
        .split(',')
        .map(|e| e.trim().trim_start_matches("*.").trim_start_matches('.'))
        .filter(|e| !e.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    let (proxy, shown) = parse(&value).map_err(|why| {
        format!(
            "proxy `{}` (from {source}): {why}; give an HTTP proxy as --proxy \
             http://HOST:PORT, or --proxy none to use no proxy",
            redact(&value)
        )
    })?;
    // As curl reads NO_PROXY: a name, and every name under it.
    let proxy = Proxy {
        host: proxy.0,
        port: proxy.1,
        username: proxy.2,
        password: proxy.3,
        no_proxy: no_proxy.clone(),
    };
    Ok(Some(ProxyChoice {
        proxy,
        shown,
        source,
        no_proxy,
    }))
}

/// Host, port, user and password of an `http://` proxy URL (the scheme may
/// be left out), and the URL as shown without credentials.
#[allow(clippy::type_complexity)]
fn parse(value: &str) -> Result<((String, u16, Option<String>, Option<String>), String), String> {
    let with_scheme = if value.contains("://") {
        value.to_string()
    } else {
        format!("http://{value}")
    };
    let url = url::Url::parse(&with_scheme).map_err(|e| format!("not a URL ({e})"))?;
    match url.scheme() {
        "http" => {}
        s if s.starts_with("socks") => {
            return Err(format!("{s} proxies are not supported (only HTTP proxies)"));
        }
        s => return Err(format!("`{s}://` proxies are not supported (only http://)")),
    }
    let host = url
        .host_str()
        .filter(|h| !h.is_empty())
        .ok_or("no host")?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let port = url.port_or_known_default().unwrap_or(80);
    let decode = |s: &str| {
        url::form_urlencoded::parse(format!("x={s}").as_bytes())
            .next()
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default()
    };
    let user = (!url.username().is_empty()).then(|| decode(url.username()));
    let pass = url.password().map(decode);
    Ok((
        (host.clone(), port, user, pass),
        format!("http://{}:{port}", url.host_str().unwrap_or(&host)),
    ))
}

/// `value` with any password replaced by `***`.
fn redact(value: &str) -> String {
    match value.split_once('@') {
        Some((creds, rest)) => match creds.rsplit_once(':') {
            Some((user, _)) if !user.ends_with('/') => format!("{user}:***@{rest}"),
            _ => value.to_string(),
        },
        None => value.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn the_flag_wins_then_the_environment_in_order() {
        let e = env(&[
            ("HTTP_PROXY", "http://h.test:1"),
            ("https_proxy", "s.test:2"),
            ("NO_PROXY", "intra.test, .corp.test"),
        ]);
        let p = choose(None, None, &e).unwrap().unwrap();
        assert_eq!(p.source, "https_proxy");
        assert_eq!(p.shown, "http://s.test:2");
        assert!(p.proxy.bypasses("intra.test"));
        assert!(p.proxy.bypasses("www.intra.test"));
        assert!(p.proxy.bypasses("a.corp.test"));
        assert!(!p.proxy.bypasses("other.test"));
        assert!(!p.proxy.bypasses("notintra.test"));
        let p = choose(Some("http://f.test:3"), Some(""), &e)
            .unwrap()
            .unwrap();
        assert_eq!(
            (p.source.as_str(), p.shown.as_str()),
            ("--proxy", "http://f.test:3")
        );
        assert!(!p.proxy.bypasses("intra.test"), "--no-proxy '' wins");
        assert!(choose(Some("none"), None, &e).unwrap().is_none());
        assert!(choose(None, None, env(&[])).unwrap().is_none());
    }

    #[test]
    fn unsupported_proxies_are_refused_with_the_way_out() {
        let e = choose(
            None,
            None,
            env(&[("ALL_PROXY", "socks5://u:secret@s.test:1080")]),
        )
        .unwrap_err();
        assert!(e.contains("ALL_PROXY") && e.contains("socks5"), "{e}");
        assert!(e.contains("--proxy none"), "{e}");
        assert!(!e.contains("secret"), "no password in messages: {e}");
        assert!(choose(Some("https://p.test"), None, env(&[])).is_err());
    }

    #[test]
    fn credentials_are_kept_but_not_shown() {
        let p = choose(Some("http://me:p%40ss@p.test:8080"), None, env(&[]))
            .unwrap()
            .unwrap();
        assert_eq!(p.proxy.username.as_deref(), Some("me"));
        assert_eq!(p.proxy.password.as_deref(), Some("p@ss"));
        assert_eq!(
            p.proxy.authorization().as_deref(),
            Some("Proxy-Authorization: Basic bWU6cEBzcw==\r\n")
        );
        assert_eq!(base64(b"a"), "YQ==");
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"abc"), "YWJj");
        assert!(!p.describe().contains("p@ss"), "{}", p.describe());
    }
}
