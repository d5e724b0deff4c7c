//! A plain HTTP/1.0 GET over std's TCP: enough for probing a URL in `wait_until` and for
//! querying a Prometheus HTTP API, without an HTTP client crate for two callers.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// Connects to `HOST:PORT` within `timeout`.
pub fn connect(addr: &str, timeout: Duration) -> Result<TcpStream, String> {
    let resolved = addr.to_socket_addrs().map_err(|e| format!("{addr}: {e}"))?.next();
    let sock = resolved.ok_or_else(|| format!("{addr}: no address"))?;
    TcpStream::connect_timeout(&sock, timeout).map_err(|e| format!("{addr}: {e}"))
}

/// GETs `url` (http:// only) and returns the status code and the body. `path` may carry
/// a query string; the caller percent-encodes it.
pub fn get(url: &str, timeout: Duration) -> Result<(u16, String), String> {
    let rest = url.strip_prefix("http://").ok_or_else(|| format!("{url}: not an http:// URL"))?;
    let (host, path) = rest.split_once('/').map(|(h, p)| (h, format!("/{p}"))).unwrap_or((rest, "/".into()));
    let addr = if host.contains(':') { host.to_string() } else { format!("{host}:80") };
    let mut s = connect(&addr, timeout)?;
    let _ = s.set_read_timeout(Some(timeout));
    write!(s, "GET {path} HTTP/1.0\r\nHost: {host}\r\nUser-Agent: fathom\r\n\r\n").map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).map_err(|e| format!("{url}: {e}"))?;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.lines().next().unwrap_or("");
    let code = status.split_whitespace().nth(1).and_then(|c| c.parse().ok());
    match code {
        Some(code) => Ok((code, body.to_string())),
        None => Err(format!("{url}: no HTTP answer ({})", if status.is_empty() { "empty" } else { status })),
    }
}

/// Percent-encodes a query-string value (RFC 3986 unreserved characters pass through).
pub fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len() * 3);
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn encodes_promql() {
        assert_eq!(super::encode("rate(x{a=\"b\"}[5s])"), "rate%28x%7Ba%3D%22b%22%7D%5B5s%5D%29");
    }
}
