//! The credentials and trust of an HTTP request as a scenario writes them, with
//! Prometheus's keys (`bearer_token_file`, `basic_auth`, `tls_config: {ca_file}`) and
//! `bearer_token_env`, wherever fathom makes one: `observe: prometheus:` and a
//! `wait_until: {http: ...}` probe. [`check`] reads them into the [`Auth`] the one HTTP
//! client (`http::Client`) is built from, so both read a key alike and refuse alike.

use crate::http::{Auth, Basic, Secret};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// `basic_auth:` as written (Prometheus's key): the user, and the password's file or
/// environment variable.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BasicAuthFile {
    pub username: String,
    pub password_file: Option<String>,
    pub password_env: Option<String>,
    /// Written only to be refused.
    pub password: Option<String>,
}

/// `tls_config:` as written (Prometheus's key).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsFile {
    pub ca_file: Option<String>,
}

/// The keys of one request's credentials and trust, as written beside its URL.
#[derive(Debug, Clone, Default)]
pub struct AuthFile {
    pub bearer_token_file: Option<String>,
    pub bearer_token_env: Option<String>,
    /// Written only to be refused: a token would be stored with the scenario.
    pub bearer_token: Option<String>,
    pub basic_auth: Option<BasicAuthFile>,
    pub tls_config: Option<TlsFile>,
}

/// An error at a key under the request's own (`tls_config.ca_file`), and what is wrong.
pub type AuthError = (String, String);

const KEEP_IT: &str = "would be stored with the scenario: keep it in a file (`*_file`) or the environment (`*_env`)";

/// Checks the keys now, not at the first request: each file readable, each variable
/// set, one kind of credential, and a CA file that holds a certificate. A token or
/// password written in the scenario is refused, as it would be stored with it.
pub fn check(keys: AuthFile) -> Result<Auth, AuthError> {
    let err = |key: &str, msg: String| (key.to_string(), msg);
    let readable = |key: &str, p: &str| match std::fs::File::open(p) {
        Ok(_) => Ok(PathBuf::from(p)),
        Err(e) => Err(err(key, format!("`{p}`: {e}"))),
    };
    let set = |key: &str, v: String| match std::env::var_os(&v) {
        Some(_) => Ok(Secret::Env(v)),
        None => Err(err(key, format!("${v} is not set"))),
    };
    if keys.bearer_token.is_some() {
        return Err(err("bearer_token", format!("a token {KEEP_IT}")));
    }
    let bearer_token = match (keys.bearer_token_file, keys.bearer_token_env) {
        (Some(_), Some(_)) => {
            return Err(err("bearer_token_env", "expected `bearer_token_file` or `bearer_token_env`, not both".into()));
        }
        (Some(f), None) => Some(Secret::File(readable("bearer_token_file", &f)?)),
        (None, Some(v)) => Some(set("bearer_token_env", v)?),
        (None, None) => None,
    };
    let basic = match keys.basic_auth {
        None => None,
        Some(b) => {
            let password = match (b.password, b.password_file, b.password_env) {
                (Some(_), ..) => return Err(err("basic_auth.password", format!("a password {KEEP_IT}"))),
                (None, Some(f), None) => Secret::File(readable("basic_auth.password_file", &f)?),
                (None, None, Some(v)) => set("basic_auth.password_env", v)?,
                _ => return Err(err("basic_auth", "expected one of `password_file` and `password_env`".into())),
            };
            Some(Basic { username: b.username, password })
        }
    };
    if bearer_token.is_some() && basic.is_some() {
        return Err(err("basic_auth", "expected a bearer token or `basic_auth`, not both".into()));
    }
    let ca_file = keys.tls_config.and_then(|t| t.ca_file);
    let ca_file = ca_file.map(|p| readable("tls_config.ca_file", &p)).transpose()?;
    let auth = Auth { bearer_token, basic, ca_file };
    // the one failure a client can have before a request: a CA file of no certificate
    crate::http::Client::new(&auth, std::time::Duration::from_secs(1))
        .map_err(|e| err("tls_config.ca_file", e.to_string()))?;
    Ok(auth)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_read_from_a_file_or_a_variable_never_the_scenario() {
        let token = |file: Option<&str>, env: Option<&str>, inline: Option<&str>| {
            check(AuthFile {
                bearer_token_file: file.map(str::to_string),
                bearer_token_env: env.map(str::to_string),
                bearer_token: inline.map(str::to_string),
                ..AuthFile::default()
            })
        };
        assert_eq!(token(None, Some("PATH"), None).unwrap().bearer_token, Some(Secret::Env("PATH".into())));
        let e = token(None, Some("FATHOM_TEST_NO_SUCH_TOKEN"), None).unwrap_err();
        assert_eq!(e, ("bearer_token_env".into(), "$FATHOM_TEST_NO_SUCH_TOKEN is not set".into()));
        let e = token(Some("/nonexistent/token"), None, None).unwrap_err();
        assert!(e.0 == "bearer_token_file" && e.1.starts_with("`/nonexistent/token`: "), "{e:?}");
        let e = token(Some("/dev/null"), Some("PATH"), None).unwrap_err();
        assert_eq!(e.0, "bearer_token_env", "{e:?}");
        let e = token(None, None, Some("Sekr1t")).unwrap_err();
        assert!(e.0 == "bearer_token" && !e.1.contains("Sekr1t"), "{e:?}");
    }
}
