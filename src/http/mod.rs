//! HTTP: the client fathom reads URLs with (`client.rs`: `wait_until`'s probe, a
//! Prometheus HTTP API, over HTTPS with credentials), and a small bounded server over
//! std's TCP for the live Prometheus endpoint, which needs no crate: it answers one GET
//! on loopback, and its limits are its own.

mod client;

pub use client::{Auth, Basic, Client, Secret, get};

use crate::error::{Error, Result};
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Connects to `HOST:PORT` within `timeout`. Errors are failures (exit 1): the callers
/// probe or query a peer during a run, whose address the scenario checker already read.
pub fn connect(addr: &str, timeout: Duration) -> Result<TcpStream> {
    let resolved = addr.to_socket_addrs().map_err(|e| Error::failed(format!("{addr}: {e}")))?.next();
    let sock = resolved.ok_or_else(|| Error::failed(format!("{addr}: no address")))?;
    TcpStream::connect_timeout(&sock, timeout).map_err(|e| Error::failed(format!("{addr}: {e}")))
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

/// What one server may spend on clients, so that none of them (idle, slow or hostile)
/// can stall the others or grow the process.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections served at once, each on a thread of its own. One more closes the
    /// oldest that has sent nothing yet (else the oldest still sending its head), so
    /// idle clients cannot keep a scrape out; with none to close it is closed, unread.
    pub connections: usize,
    /// The most a request's head (request line and headers) may take.
    pub head_bytes: usize,
    /// How long a client has, from its connection, to send the whole head.
    pub head_time: Duration,
    /// How long writing the answer may block on a client that does not read.
    pub write_time: Duration,
}

/// The head of a request: enough to route it.
#[derive(Debug)]
pub struct Request {
    pub method: String,
    /// As sent: the path and any query string.
    pub target: String,
    headers: Vec<(String, String)>,
}

impl Request {
    /// The value of header `name` (any case), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// An answer; the connection closes after it.
pub struct Response {
    /// `200 OK`, `404 Not Found`, ...
    pub status: &'static str,
    pub content_type: &'static str,
    pub body: String,
}

/// Serves `listener` until `stop` is set (the next connection after it, e.g. one made
/// to wake it, ends the loop): each connection on a thread of its own, so an idle or
/// slow client holds only its own. At most `limits.connections` at once, and a new one
/// at the cap takes the place of one still sending its head (see [`Waiting::evict`]);
/// its head is read until the blank line within `limits.head_time` and
/// `limits.head_bytes`, then `handle` answers it.
pub fn serve<H>(listener: TcpListener, stop: &AtomicBool, limits: Limits, handle: H)
where
    H: Fn(&Request) -> Response + Send + Sync + 'static,
{
    let handle = Arc::new(handle);
    let busy = Arc::new(AtomicUsize::new(0));
    let waiting = Arc::new(Waiting::default());
    for conn in listener.incoming() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let conn = match conn {
            Ok(conn) => conn,
            // out of descriptors, or the like: let some close rather than spin
            Err(_) => {
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
        };
        let held = busy.fetch_add(1, Ordering::SeqCst);
        // a closed one's thread ends at once, but until it has, it is counted: twice the
        // cap bounds the threads however fast clients come
        if held >= limits.connections && (held >= 2 * limits.connections || !waiting.evict()) {
            busy.fetch_sub(1, Ordering::SeqCst);
            continue; // dropped: closed at once
        }
        let Some((id, heard)) = waiting.add(&conn) else {
            busy.fetch_sub(1, Ordering::SeqCst);
            continue;
        };
        let (handle, slot, waiting) = (handle.clone(), Slot(busy.clone()), waiting.clone());
        // a thread that cannot start drops its connection and gives its slot back
        let _ = std::thread::Builder::new().name("http".into()).stack_size(512 << 10).spawn(move || {
            let _slot = slot;
            let mut conn = conn;
            let head = read_head(&mut conn, limits, &heard);
            waiting.remove(id);
            answer(conn, head, limits, &*handle);
        });
    }
}

/// The connections still sending their heads, oldest first: the ones a new connection
/// at the cap may close.
#[derive(Default)]
struct Waiting {
    next: AtomicU64,
    conns: Mutex<VecDeque<Waiter>>,
}

/// A connection sending its head: a handle to close it by, and whether it has sent
/// anything yet (one that has not is idle, the first to go).
struct Waiter {
    id: u64,
    conn: TcpStream,
    heard: Arc<AtomicBool>,
}

impl Waiting {
    /// Registers `conn`: its id and the flag its first byte sets; `None` when there is
    /// no handle to close it by (it is dropped).
    fn add(&self, conn: &TcpStream) -> Option<(u64, Arc<AtomicBool>)> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let heard = Arc::new(AtomicBool::new(false));
        let kept = Waiter { id, conn: conn.try_clone().ok()?, heard: heard.clone() };
        self.conns.lock().unwrap_or_else(|e| e.into_inner()).push_back(kept);
        Some((id, heard))
    }

    /// Takes `id` out: its head is read (or it is gone).
    fn remove(&self, id: u64) {
        self.conns.lock().unwrap_or_else(|e| e.into_inner()).retain(|w| w.id != id);
    }

    /// Closes the oldest connection that has sent nothing, else the oldest still
    /// sending its head; whether there was one. A scrape sends its head at once, so it
    /// is never the one closed while idle clients hold places.
    fn evict(&self) -> bool {
        let mut conns = self.conns.lock().unwrap_or_else(|e| e.into_inner());
        let at = conns.iter().position(|w| !w.heard.load(Ordering::SeqCst)).unwrap_or(0);
        match conns.remove(at) {
            Some(w) => {
                let _ = w.conn.shutdown(std::net::Shutdown::Both);
                true
            }
            None => false,
        }
    }
}

/// A connection's place in [`serve`]'s count, given back however its thread ends.
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Writes `handle`'s answer to a request whose head was read as `head`: a head too
/// large gets 431, one not sent in time or malformed is closed without a word.
fn answer(
    mut conn: TcpStream,
    head: std::result::Result<Request, HeadError>,
    limits: Limits,
    handle: &dyn Fn(&Request) -> Response,
) {
    let response = match head {
        Ok(request) => handle(&request),
        Err(HeadError::TooLarge) => Response {
            status: "431 Request Header Fields Too Large",
            content_type: "text/plain; charset=utf-8",
            body: format!("request head over {} bytes\n", limits.head_bytes),
        },
        Err(HeadError::Unusable) => return,
    };
    let _ = conn.set_write_timeout(Some(limits.write_time));
    let head = format!(
        "HTTP/1.1 {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        response.status,
        response.content_type,
        response.body.len()
    );
    let _ = conn.write_all(head.as_bytes()).and_then(|_| conn.write_all(response.body.as_bytes()));
}

enum HeadError {
    TooLarge,
    /// Closed, timed out, or not HTTP.
    Unusable,
}

/// Reads until the blank line that ends a request's head, however many reads it takes,
/// within the limits; `heard` is set at its first byte.
fn read_head(conn: &mut TcpStream, limits: Limits, heard: &AtomicBool) -> std::result::Result<Request, HeadError> {
    let deadline = Instant::now() + limits.head_time;
    let mut buf: Vec<u8> = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    let end = loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4) {
            break end;
        }
        if let Some(end) = buf.windows(2).position(|w| w == b"\n\n").map(|i| i + 2) {
            break end;
        }
        if buf.len() > limits.head_bytes {
            return Err(HeadError::TooLarge);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || conn.set_read_timeout(Some(left)).is_err() {
            return Err(HeadError::Unusable);
        }
        match conn.read(&mut chunk) {
            Ok(0) | Err(_) => return Err(HeadError::Unusable),
            Ok(n) => {
                heard.store(true, Ordering::SeqCst);
                buf.extend_from_slice(&chunk[..n]);
            }
        }
    };
    if end > limits.head_bytes {
        return Err(HeadError::TooLarge);
    }
    let text = String::from_utf8_lossy(&buf[..end]);
    let mut lines = text.lines();
    let mut first = lines.next().unwrap_or_default().split_whitespace();
    let (Some(method), Some(target)) = (first.next(), first.next()) else { return Err(HeadError::Unusable) };
    let headers =
        lines.filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim().to_string(), v.trim().to_string())).collect();
    Ok(Request { method: method.to_string(), target: target.to_string(), headers })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_promql() {
        assert_eq!(super::encode("rate(x{a=\"b\"}[5s])"), "rate%28x%7Ba%3D%22b%22%7D%5B5s%5D%29");
    }

    /// A server with `limits` answering every request with its target, on a loopback
    /// port; its address.
    fn echo_server(limits: Limits) -> std::net::SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            static NEVER: AtomicBool = AtomicBool::new(false);
            serve(listener, &NEVER, limits, |r| Response {
                status: "200 OK",
                content_type: "text/plain",
                body: format!("{} {} accept={}", r.method, r.target, r.header("ACCEPT").unwrap_or("-")),
            })
        });
        addr
    }

    fn exchange(addr: std::net::SocketAddr, parts: &[&[u8]]) -> String {
        let mut c = TcpStream::connect(addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        for p in parts {
            c.write_all(p).unwrap();
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut out = String::new();
        let _ = c.read_to_string(&mut out);
        out
    }

    #[test]
    fn a_head_is_read_to_its_blank_line_within_its_limits() {
        let limits = Limits {
            connections: 4,
            head_bytes: 512,
            head_time: Duration::from_secs(10),
            write_time: Duration::from_secs(5),
        };
        let addr = echo_server(limits);
        let split: [&[u8]; 4] = [b"GE", b"T /metrics?x=1 HTTP/1.1\r\nAcc", b"ept: text/plain\r\n", b"\r\n"];
        let out = exchange(addr, &split);
        assert!(out.starts_with("HTTP/1.1 200 OK\r\n"), "{out}");
        assert!(out.ends_with("\r\n\r\nGET /metrics?x=1 accept=text/plain"), "{out}");
        // bare newlines end a head too
        assert!(exchange(addr, &[b"GET / HTTP/1.0\n\n"]).ends_with("GET / accept=-"));
        let big = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "y".repeat(600));
        assert!(exchange(addr, &[big.as_bytes()]).starts_with("HTTP/1.1 431 "));
        let endless = "z".repeat(600);
        assert!(exchange(addr, &[endless.as_bytes()]).starts_with("HTTP/1.1 431 "));
        // not HTTP: closed without a word
        assert_eq!(exchange(addr, &[b"\r\n\r\n"]), "");
    }

    #[test]
    fn idle_clients_hold_only_their_own_connection_and_give_it_up_to_a_request() {
        let limits = Limits {
            connections: 3,
            head_bytes: 512,
            head_time: Duration::from_secs(4),
            write_time: Duration::from_secs(5),
        };
        let addr = echo_server(limits);
        let idle: Vec<TcpStream> = (0..2).map(|_| TcpStream::connect(addr).unwrap()).collect();
        std::thread::sleep(Duration::from_millis(200));
        // two idle ones hold two of three: a request is still served at once
        let started = Instant::now();
        assert!(exchange(addr, &[b"GET /a HTTP/1.0\r\n\r\n"]).ends_with("GET /a accept=-"));
        assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
        // three hold all: a request takes the place of the oldest idle one, which is closed
        let third = TcpStream::connect(addr).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let started = Instant::now();
        assert!(exchange(addr, &[b"GET /c HTTP/1.0\r\n\r\n"]).ends_with("GET /c accept=-"));
        assert!(started.elapsed() < Duration::from_secs(3), "served after {:?}", started.elapsed());
        let mut idle = idle.into_iter();
        let mut oldest = idle.next().unwrap();
        oldest.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        assert_eq!(oldest.read(&mut [0u8; 16]).unwrap_or(0), 0);
        assert!(started.elapsed() < Duration::from_secs(3), "closed after {:?}", started.elapsed());
        // idle ones are closed when their time is up, and their places serve again
        for mut c in idle.chain([third]) {
            c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
            assert_eq!(c.read(&mut [0u8; 16]).unwrap_or(0), 0);
        }
        let started = Instant::now();
        while !exchange(addr, &[b"GET /b HTTP/1.0\r\n\r\n"]).ends_with("GET /b accept=-") {
            assert!(started.elapsed() < Duration::from_secs(20), "no place came free");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}
