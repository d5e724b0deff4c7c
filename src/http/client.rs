//! The HTTP client: GETs over http:// or https:// (ureq with rustls, certificates
//! verified against Mozilla's roots or a CA file), with a bearer token or basic auth
//! read from a file or the environment at each request. Every request fathom makes goes
//! through [`Client`], built from the [`Auth`] a scenario's keys give (`scenario/auth.rs`). Credentials never enter a URL,
//! an error or the store: only where to find them is written down.

use crate::error::{Error, Result};
use std::path::PathBuf;
use std::time::Duration;

/// The most of an answer fathom reads: a Prometheus query's vector of a few series is
/// kilobytes, and a bigger body is a mistake fathom must not hold in memory.
const MAX_BODY: u64 = 16 << 20;

/// How fathom proves who it is to a server, and which certificates it trusts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Auth {
    /// Where the token sent as `Authorization: Bearer TOKEN` is kept, read at each
    /// request, so a token rotated while a run goes is picked up.
    pub bearer_token: Option<Secret>,
    pub basic: Option<Basic>,
    /// PEM certificates of the authorities that sign the server's certificate, instead
    /// of Mozilla's roots (a site's own CA).
    pub ca_file: Option<PathBuf>,
}

/// Basic authentication: the user and where the password is kept.
#[derive(Debug, Clone, PartialEq)]
pub struct Basic {
    pub username: String,
    pub password: Secret,
}

/// Where a secret is kept: never its value, which is read when it is sent.
#[derive(Debug, Clone, PartialEq)]
pub enum Secret {
    File(PathBuf),
    Env(String),
}

impl Secret {
    /// The secret, its file's trailing newline dropped. The error names where it was
    /// looked for, never what was found.
    pub fn read(&self) -> Result<String> {
        let value = match self {
            Secret::File(p) => {
                std::fs::read_to_string(p).map_err(|e| Error::failed(format!("{}: {e}", p.display())))?
            }
            Secret::Env(v) => std::env::var(v).map_err(|_| Error::failed(format!("${v} is not set")))?,
        };
        let value = value.trim_end_matches(['\n', '\r']).to_string();
        if value.is_empty() {
            return Err(Error::failed(format!("{} is empty", self.whence())));
        }
        Ok(value)
    }

    fn whence(&self) -> String {
        match self {
            Secret::File(p) => p.display().to_string(),
            Secret::Env(v) => format!("${v}"),
        }
    }
}

/// An HTTP client with its credentials and trust, made once for a run's many requests.
pub struct Client {
    agent: ureq::Agent,
    auth: Auth,
}

impl Client {
    /// A client whose every request ends within `timeout`. Fails on a CA file that
    /// holds no certificate: a server it signed could never be trusted.
    pub fn new(auth: &Auth, timeout: Duration) -> Result<Client> {
        use ureq::tls::{PemItem, RootCerts, TlsConfig};
        let roots = match &auth.ca_file {
            None => RootCerts::WebPki,
            Some(path) => {
                let pem = std::fs::read(path).map_err(|e| Error::failed(format!("{}: {e}", path.display())))?;
                let certs: Vec<_> = ureq::tls::parse_pem(&pem)
                    .filter_map(|item| match item {
                        Ok(PemItem::Certificate(c)) => Some(c),
                        _ => None,
                    })
                    .collect();
                if certs.is_empty() {
                    return Err(Error::failed(format!("{}: no PEM certificate in it", path.display())));
                }
                RootCerts::new_with_certs(&certs)
            }
        };
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .user_agent(concat!("fathom/", env!("CARGO_PKG_VERSION")))
            .tls_config(TlsConfig::builder().root_certs(roots).build())
            .build();
        Ok(Client { agent: config.into(), auth: auth.clone() })
    }

    /// GETs `url` (http:// or https://; a query string already percent-encoded) and
    /// returns the status code and the body. Errors quote the URL, never a credential:
    /// scenarios refuse a URL with `user:password@` before it gets here.
    pub fn get(&self, url: &str) -> Result<(u16, String)> {
        let mut request = self.agent.get(url);
        if let Some(value) = self.authorization()? {
            request = request.header("Authorization", value);
        }
        let mut answer = request.call().map_err(|e| Error::failed(format!("{url}: {}", why(&e))))?;
        let code = answer.status().as_u16();
        let body = answer
            .body_mut()
            .with_config()
            .limit(MAX_BODY)
            .read_to_string()
            .map_err(|e| Error::failed(format!("{url}: HTTP {code}, reading the answer: {}", why(&e))))?;
        Ok((code, body))
    }

    /// The `Authorization` header's value, read now.
    fn authorization(&self) -> Result<Option<String>> {
        use base64::Engine as _;
        let cannot = |e: Error| Error::failed(format!("reading the credentials: {e}"));
        if let Some(kept) = &self.auth.bearer_token {
            let token = kept.read().map_err(cannot)?;
            return Ok(Some(format!("Bearer {token}")));
        }
        if let Some(b) = &self.auth.basic {
            let password = b.password.read().map_err(cannot)?;
            let pair = base64::engine::general_purpose::STANDARD.encode(format!("{}:{password}", b.username));
            return Ok(Some(format!("Basic {pair}")));
        }
        Ok(None)
    }
}

/// What went wrong, in words a person acts on: a certificate fathom does not trust says
/// how to trust it.
fn why(e: &ureq::Error) -> String {
    let text = e.to_string();
    if text.contains("UnknownIssuer") || text.contains("certificate") {
        return format!(
            "{text} (the server's certificate is not signed by an authority fathom trusts: give its CA as \
             `tls_config: {{ca_file: PATH}}`)"
        );
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_is_read_where_it_is_kept_and_never_quoted() {
        let dir = std::env::temp_dir().join(format!("fathom-secret-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("token");
        std::fs::write(&file, "Sekr1t-token\n").unwrap();
        assert_eq!(Secret::File(file.clone()).read().unwrap(), "Sekr1t-token");
        std::fs::write(&file, "\n").unwrap();
        let empty = Secret::File(file.clone()).read().unwrap_err().to_string();
        assert!(empty.contains("is empty"), "{empty}");
        let unset = Secret::Env("FATHOM_TEST_UNSET_SECRET".into()).read().unwrap_err().to_string();
        assert_eq!(unset, "$FATHOM_TEST_UNSET_SECRET is not set");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_ca_file_without_a_certificate_is_refused() {
        let auth = Auth { ca_file: Some(PathBuf::from("/dev/null")), ..Auth::default() };
        let e = Client::new(&auth, Duration::from_secs(1)).err().unwrap().to_string();
        assert!(e.contains("no PEM certificate"), "{e}");
    }
}
