//! TLS: which servers are trusted, the connector that wraps connections to
//! `https` URLs, and the short reason the crawl log gives when a handshake
//! fails.
//!
//! Trust is built once per run ([`Trust::load`]) and shared by every
//! connection: the roots bundled with the program (Mozilla's, from
//! `webpki-roots`), the system store (the PEM bundle and directory of the
//! distribution, or `SSL_CERT_FILE`/`SSL_CERT_DIR` when set), and the
//! certificates of `--ca-file`. With `--accept-invalid-certs` every
//! certificate is accepted (the handshake's signatures are still checked
//! against the certificate's key), for archival crawls.
//!
//! The handshake ([`handshake`]) runs on the connection layer of
//! [`crate::transport`], over a TCP connection or a proxy's tunnel, so the
//! WARC records hold the HTTP bytes as they were before encryption and after
//! decryption.

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, ClientConnection, RootCertStore};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_rustls::client::TlsStream;

/// The `warcinfo` field of the WARC files of a run with
/// `--accept-invalid-certs`: their https records may come from servers whose
/// certificate was not valid for the host (or not valid at all).
pub const INVALID_CERTS_FIELD: (&str, &str) = (
    "tls-certificates",
    "not verified (--accept-invalid-certs): https records may come from a server with an invalid certificate",
);

/// The TLS client settings of a run, built once and shared by every
/// connection.
#[derive(Debug, Clone)]
pub struct Trust {
    config: Arc<ClientConfig>,
    /// With `--accept-invalid-certs`: the check a certificate would have
    /// had, run for the crawl log's note only.
    unchecked: Option<Arc<AcceptInvalid>>,
    /// What was loaded, for the run log.
    pub summary: TrustSummary,
}

/// Where the trusted roots came from.
#[derive(Debug, Clone, Default)]
pub struct TrustSummary {
    /// Roots bundled with the program.
    pub bundled: usize,
    /// Roots of the system store accepted.
    pub system: usize,
    /// Problems reading the system store (the roots read are used all the same).
    pub system_errors: Vec<String>,
    /// Roots of `--ca-file`, and the file.
    pub ca_file: Option<(PathBuf, usize)>,
}

impl TrustSummary {
    /// One line for the run log.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "TLS trust: {} bundled roots, {} from the system store",
            self.bundled, self.system
        );
        if let Some((path, n)) = &self.ca_file {
            let _ = write!(s, ", {n} from {}", path.display());
        }
        s
    }
}

impl Trust {
    /// The bundled roots, the system store and the certificates of
    /// `ca_file`; with `accept_invalid`, any certificate is accepted. An
    /// error names `ca_file` when it cannot be read or holds no usable
    /// certificate.
    pub fn load(ca_file: Option<&Path>, accept_invalid: bool) -> Result<Trust, String> {
        let mut roots = RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        let mut summary = TrustSummary {
            bundled: roots.len(),
            ..TrustSummary::default()
        };
        let system = rustls_native_certs::load_native_certs();
        summary.system_errors = system.errors.iter().map(|e| e.to_string()).collect();
        let (added, _unusable) = roots.add_parsable_certificates(system.certs);
        summary.system = added;
        if let Some(path) = ca_file {
            let n = add_ca_file(&mut roots, path)?;
            summary.ca_file = Some((path.to_path_buf(), n));
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let roots = Arc::new(roots);
        let verifier = WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
            .build()
            .map_err(|e| format!("TLS trust store: {e}"))?;
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS settings: {e}"))?;
        let (config, unchecked) = if accept_invalid {
            let check = Arc::new(AcceptInvalid {
                checked: verifier,
                provider,
                problem: Arc::default(),
            });
            let config = builder
                .dangerous()
                .with_custom_certificate_verifier(check.clone())
                .with_no_client_auth();
            (config, Some(check))
        } else {
            let config = builder.with_webpki_verifier(verifier).with_no_client_auth();
            (config, None)
        };
        Ok(Trust {
            config: Arc::new(config),
            unchecked,
            summary,
        })
    }

    /// The settings of one connection, and with `--accept-invalid-certs`
    /// where its handshake notes why the certificate would have been
    /// refused (a verifier of its own: handshakes run side by side).
    fn for_connection(&self) -> (Arc<ClientConfig>, Option<Problem>) {
        let Some(unchecked) = &self.unchecked else {
            return (Arc::clone(&self.config), None);
        };
        let problem: Problem = Arc::default();
        let mut config = ClientConfig::clone(&self.config);
        config
            .dangerous()
            .set_certificate_verifier(Arc::new(AcceptInvalid {
                checked: unchecked.checked.clone(),
                provider: unchecked.provider.clone(),
                problem: problem.clone(),
            }));
        (Arc::new(config), Some(problem))
    }
}

/// Adds the certificates of a PEM file to `roots`; their number, or an
/// error naming the file.
fn add_ca_file(roots: &mut RootCertStore, path: &Path) -> Result<usize, String> {
    let shown = path.display();
    let bytes = std::fs::read(path).map_err(|e| format!("--ca-file {shown}: {e}"))?;
    let mut found = 0;
    for (i, cert) in CertificateDer::pem_slice_iter(&bytes).enumerate() {
        let cert = cert.map_err(|e| {
            format!(
                "--ca-file {shown}: certificate {}: not valid PEM: {e}",
                i + 1
            )
        })?;
        roots.add(cert).map_err(|e| {
            format!(
                "--ca-file {shown}: certificate {} cannot be a trust anchor: {e}",
                i + 1
            )
        })?;
        found += 1;
    }
    if found == 0 {
        return Err(format!(
            "--ca-file {shown}: no certificate found (expected PEM blocks starting with \
             `-----BEGIN CERTIFICATE-----`)"
        ));
    }
    Ok(found)
}

/// What a TLS connection negotiated, as WARC records name it
/// (`WARC-Protocol`, `WARC-Cipher-Suite`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// `tls/1.3` or `tls/1.2`.
    pub protocol: String,
    /// The cipher suite's IANA name (`TLS_AES_128_GCM_SHA256`).
    pub cipher_suite: String,
}

impl Session {
    fn of(conn: &ClientConnection) -> Option<Session> {
        let protocol = match conn.protocol_version()? {
            rustls::ProtocolVersion::TLSv1_3 => "tls/1.3".to_string(),
            rustls::ProtocolVersion::TLSv1_2 => "tls/1.2".to_string(),
            other => format!("{other:?}").to_ascii_lowercase(),
        };
        let suite = conn.negotiated_cipher_suite()?.suite();
        let name = suite
            .as_str()
            .map_or_else(|| format!("{suite:?}"), str::to_string);
        // rustls names the TLS 1.3 suites `TLS13_...`; IANA `TLS_...`.
        let cipher_suite = match name.strip_prefix("TLS13_") {
            Some(rest) => format!("TLS_{rest}"),
            None => name,
        };
        Some(Session {
            protocol,
            cipher_suite,
        })
    }
}

/// The certificate check of `--accept-invalid-certs`: any certificate is
/// accepted, but the handshake must still be signed with its key. What the
/// usual check would have said is kept for the connection, so that the
/// crawl log can note it.
#[derive(Debug)]
struct AcceptInvalid {
    checked: Arc<WebPkiServerVerifier>,
    provider: Arc<CryptoProvider>,
    /// Why the last certificate checked would have been refused.
    problem: Problem,
}

/// Where a handshake notes why its certificate would have been refused.
type Problem = Arc<Mutex<Option<Arc<str>>>>;

impl ServerCertVerifier for AcceptInvalid {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let checked = self.checked.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        );
        if let Err(e) = checked {
            *self.problem.lock().unwrap_or_else(|e| e.into_inner()) = Some(reason(&e).into());
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// A TLS connection over `io`, and what its handshake learned.
pub struct Handshaken<S> {
    /// The connection.
    pub stream: TlsStream<S>,
    /// What it negotiated.
    pub session: Option<Arc<Session>>,
    /// Why its certificate would have been refused, when
    /// `--accept-invalid-certs` accepted it all the same.
    pub accepted_invalid: Option<Arc<str>>,
}

/// Wraps `io` (a TCP connection or a proxy's tunnel to `host`) in TLS
/// with the run's `trust`. A failed handshake is an I/O error holding the
/// rustls error ([`rustls_error_of`]) when it is one.
pub async fn handshake<S: AsyncRead + AsyncWrite + Unpin>(
    trust: &Trust,
    host: &str,
    io: S,
) -> io::Result<Handshaken<S>> {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let name = ServerName::try_from(host)
        .map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "the host is not a valid TLS server name",
            )
        })?
        .to_owned();
    let (config, problem) = trust.for_connection();
    let stream = tokio_rustls::TlsConnector::from(config)
        .connect(name, io)
        .await?;
    let session = Session::of(stream.get_ref().1).map(Arc::new);
    let accepted_invalid = problem.and_then(|p| p.lock().unwrap_or_else(|e| e.into_inner()).take());
    Ok(Handshaken {
        stream,
        session,
        accepted_invalid,
    })
}

/// The rustls error inside an I/O error, if any (what a TLS connection
/// reports once the handshake is over).
pub fn rustls_error_of(e: &io::Error) -> Option<&rustls::Error> {
    e.get_ref().and_then(|inner| inner.downcast_ref())
}

/// A short reason for a failed TLS handshake or connection, for the crawl log.
pub fn reason(e: &rustls::Error) -> String {
    use rustls::Error as E;
    match e {
        E::InvalidCertificate(c) => certificate_reason(c),
        E::AlertReceived(alert) => format!("the server refused the handshake: {}", words(alert)),
        E::PeerIncompatible(p) => format!(
            "no TLS version or cipher in common with the server: {}",
            words(p)
        ),
        E::PeerMisbehaved(p) => format!("the server broke the TLS protocol: {}", words(p)),
        E::InvalidMessage(m) => format!("not a TLS server, or a damaged TLS message: {}", words(m)),
        E::InappropriateMessage { .. } | E::InappropriateHandshakeMessage { .. } => {
            format!("unexpected TLS message: {e}")
        }
        E::NoCertificatesPresented => "the server sent no certificate".into(),
        E::DecryptError => "TLS decryption failed (damaged or forged data)".into(),
        other => format!("TLS: {other}"),
    }
}

/// The reason for a refused certificate.
fn certificate_reason(c: &CertificateError) -> String {
    use CertificateError as C;
    let date = |t: &UnixTime| {
        common::timefmt::iso_seconds(
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(t.as_secs()),
        )
    };
    match c {
        C::UnknownIssuer => {
            "certificate from an unknown issuer (not signed by a trusted root; see --ca-file)"
                .into()
        }
        C::Expired => "certificate expired".into(),
        C::ExpiredContext { not_after, .. } => {
            format!("certificate expired (valid until {})", date(not_after))
        }
        C::NotValidYet => "certificate not valid yet".into(),
        C::NotValidYetContext { not_before, .. } => {
            format!(
                "certificate not valid yet (valid from {})",
                date(not_before)
            )
        }
        C::NotValidForName => "certificate not valid for this host name".into(),
        C::NotValidForNameContext {
            expected,
            presented,
        } => {
            let expected = match expected {
                ServerName::DnsName(d) => d.as_ref().to_string(),
                ServerName::IpAddress(ip) => std::net::IpAddr::from(*ip).to_string(),
                other => format!("{other:?}"),
            };
            if presented.is_empty() {
                format!("certificate not valid for {expected} (it names no host)")
            } else {
                let names: Vec<&str> = presented.iter().map(|p| bare_name(p)).collect();
                format!(
                    "certificate not valid for {expected} (it is for {})",
                    names.join(", ")
                )
            }
        }
        C::Revoked => "certificate revoked".into(),
        C::BadSignature => "certificate with a bad signature".into(),
        C::BadEncoding => "certificate badly encoded".into(),
        C::InvalidPurpose | C::InvalidPurposeContext { .. } => {
            "certificate not meant for a web server".into()
        }
        other => format!("certificate refused: {}", words(other)),
    }
}

/// `another.test` for rustls's `DnsName("another.test")` (and the like
/// for addresses); anything else as it is.
fn bare_name(presented: &str) -> &str {
    presented
        .split_once("(\"")
        .and_then(|(_, rest)| rest.strip_suffix("\")"))
        .unwrap_or(presented)
}

/// `HandshakeFailure` → `handshake failure`: the debug name of an enum
/// value as words.
fn words(v: &impl std::fmt::Debug) -> String {
    let name = format!("{v:?}");
    let mut out = String::with_capacity(name.len() + 8);
    for (i, ch) in name.chars().enumerate() {
        if ch.is_ascii_uppercase() {
            if i > 0 && !out.ends_with([' ', '(']) {
                out.push(' ');
            }
            out.push(ch.to_ascii_lowercase());
        } else {
            out.push(ch);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_short_and_say_what_is_wrong() {
        let e = rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer);
        assert!(reason(&e).starts_with("certificate from an unknown issuer"));
        let e = rustls::Error::InvalidCertificate(CertificateError::ExpiredContext {
            time: UnixTime::since_unix_epoch(std::time::Duration::from_secs(1_700_000_000)),
            not_after: UnixTime::since_unix_epoch(std::time::Duration::from_secs(1_600_000_000)),
        });
        assert_eq!(
            reason(&e),
            "certificate expired (valid until 2020-09-13T12:26:40Z)"
        );
        let e = rustls::Error::InvalidCertificate(CertificateError::NotValidForNameContext {
            expected: ServerName::try_from("a.test").unwrap(),
            presented: vec!["DnsName(\"b.test\")".into(), "c.test".into()],
        });
        assert_eq!(
            reason(&e),
            "certificate not valid for a.test (it is for b.test, c.test)"
        );
        let e = rustls::Error::AlertReceived(rustls::AlertDescription::HandshakeFailure);
        assert_eq!(
            reason(&e),
            "the server refused the handshake: handshake failure"
        );
    }

    #[test]
    fn a_ca_file_without_certificates_is_refused_with_its_name() {
        let dir = common::testutil::TempDir::new("fetcher-tls-empty-ca");
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let e = Trust::load(Some(&empty), false).unwrap_err();
        assert!(
            e.contains("empty.pem") && e.contains("no certificate found"),
            "{e}"
        );
        let missing = dir.join("missing.pem");
        let e = Trust::load(Some(&missing), false).unwrap_err();
        assert!(e.contains("missing.pem"), "{e}");
        let t = Trust::load(None, false).unwrap();
        assert!(t.summary.bundled > 100, "the bundled roots are there");
    }
}
