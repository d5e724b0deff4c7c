//! Secrets in what users hand fathom. Everything a run is given is kept (the scenario,
//! the command line, the programs' own error messages) and shown again (`fathom show`,
//! reports), so a password must never get in. Two lines of defence, both here:
//!
//! - [`dsn_secret`] reads a PostgreSQL connection string exactly as libpq does
//!   (`conninfo_parse` and `conninfo_uri_parse` in libpq's fe-connect.c), so a password
//!   is found in whatever form libpq would take it from, and the scenario is refused;
//! - [`redact`] masks anything that looks like a secret in text on its way to the
//!   store or the terminal, for what the first line cannot see (a password in an
//!   `exec:` command line, a hook's argument, a form no parser here knows); its rules
//!   and [`secret_key`], the one test of a secret-like key, are in `redact/`.

mod dsn;
mod redact;

pub use dsn::{dsn_secret, dsn_server};
pub use redact::{URL_CREDENTIALS, redact, redact_json, redact_yaml, secret_key, url_has_credentials};
