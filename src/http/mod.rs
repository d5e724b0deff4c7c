//! HTTP: the client fathom reads URLs with (`client.rs`: `wait_until`'s probe, a
//! Prometheus HTTP API, over HTTPS with credentials), and a small bounded server over
//! std's TCP for the live Prometheus endpoint, which needs no crate: it answers one GET
//! on loopback, and its limits are its own.

mod client;

pub use client::{Auth, Basic, Client, Secret};

use crate::error::{Error, Result};
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
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
    /// Requests served at once, each on a thread of its own. A connection takes a place
    /// only once it has sent something: until then it waits threadless (see
    /// [`MAX_WAITING`]), so idle clients, however many and however fast they reconnect,
    /// hold no place a scrape needs; past the cap a request waits for a place.
    pub connections: usize,
    /// The most a request's head (request line and headers) may take.
    pub head_bytes: usize,
    /// How long a client has, from its connection, to send the whole head.
    pub head_time: Duration,
    /// How long writing the answer may block on a client that does not read.
    pub write_time: Duration,
}

/// Connections that have sent nothing yet, kept open without a thread: past this the
/// oldest is closed, but never one younger than [`GRACE`]. A scrape sends its request at
/// once, so it leaves the wait before idle clients could push it out.
pub const MAX_WAITING: usize = 256;

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

/// Serves `listener` until `stop` is set (checked every [`TICK`]). One thread accepts
/// and watches the connections that have sent nothing (`poll`); a connection that has
/// sent something is answered on a thread of its own, at most `limits.connections` at
/// once, its head read until the blank line within `limits.head_time` (from its
/// connection) and `limits.head_bytes`, then `handle` answers it. One that sends
/// nothing within `limits.head_time`, or is the oldest of more than [`MAX_WAITING`], is
/// closed unread.
pub fn serve<H>(listener: TcpListener, stop: &AtomicBool, limits: Limits, handle: H)
where
    H: Fn(&Request) -> Response + Send + Sync + 'static,
{
    let handle = Arc::new(handle);
    let busy = Arc::new(AtomicUsize::new(0));
    if listener.set_nonblocking(true).is_err() {
        return;
    }
    let mut waiting: VecDeque<(TcpStream, Instant)> = VecDeque::new();
    let mut ready: VecDeque<(TcpStream, Instant)> = VecDeque::new();
    while !stop.load(Ordering::Relaxed) {
        let (mut heard, listening) = watch(&listener, &waiting, TICK);
        if listening {
            accept_all(&listener, &mut waiting);
            // what the new ones sent already is seen before any is pushed out
            heard = watch(&listener, &waiting, Duration::ZERO).0;
        }
        // those that sent something (or closed: their read says so at once) go to be
        // answered, in the order they came
        for i in heard.into_iter().rev() {
            if let Some(w) = waiting.remove(i) {
                ready.push_back(w);
            }
        }
        ready.make_contiguous().sort_by_key(|(_, since)| *since);
        for queue in [&mut waiting, &mut ready] {
            queue.retain(|(_, since)| since.elapsed() < limits.head_time);
            trim(queue);
        }
        while busy.load(Ordering::SeqCst) < limits.connections {
            let Some((conn, since)) = ready.pop_front() else { break };
            busy.fetch_add(1, Ordering::SeqCst);
            let (handle, slot) = (handle.clone(), Slot(busy.clone()));
            // a thread that cannot start drops its connection and gives its slot back
            let _ = std::thread::Builder::new().name("http".into()).stack_size(512 << 10).spawn(move || {
                let _slot = slot;
                let mut conn = conn;
                let head = read_head(&mut conn, limits, since + limits.head_time);
                answer(conn, head, limits, &*handle);
            });
        }
    }
}

/// How often [`serve`] looks at `stop` when nothing happens.
const TICK: Duration = Duration::from_millis(50);

/// Waits up to `wait` for the listener or a waiting connection: the waiting ones that
/// sent something (or closed), by index, and whether the listener has connections.
fn watch(listener: &TcpListener, waiting: &VecDeque<(TcpStream, Instant)>, wait: Duration) -> (Vec<usize>, bool) {
    use std::os::fd::AsRawFd;
    let mut fds: Vec<libc::pollfd> = std::iter::once(listener.as_raw_fd())
        .chain(waiting.iter().map(|(c, _)| c.as_raw_fd()))
        .map(|fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 })
        .collect();
    // SAFETY: `fds` is a valid array of `fds.len()` pollfd structs that poll fills in.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, wait.as_millis() as libc::c_int) };
    if n <= 0 {
        return (Vec::new(), false);
    }
    let heard = fds[1..].iter().enumerate().filter(|(_, p)| p.revents != 0).map(|(i, _)| i).collect();
    (heard, fds[0].revents != 0)
}

/// A connection this new is never the one closed to make room: a request sent at once
/// has had no time to be seen yet.
const GRACE: Duration = Duration::from_millis(200);

/// Closes the oldest of `queue` past [`MAX_WAITING`], those older than [`GRACE`] first,
/// and any past four times as many.
fn trim(queue: &mut VecDeque<(TcpStream, Instant)>) {
    while queue.len() > MAX_WAITING && queue.front().is_some_and(|(_, since)| since.elapsed() >= GRACE) {
        queue.pop_front();
    }
    while queue.len() > 4 * MAX_WAITING {
        queue.pop_front();
    }
}

/// Accepts every connection the listener holds into `waiting`, with when it came.
fn accept_all(listener: &TcpListener, waiting: &mut VecDeque<(TcpStream, Instant)>) {
    loop {
        match listener.accept() {
            Ok((conn, _)) => {
                // its reads wait, bounded by the head's deadline
                if conn.set_nonblocking(false).is_ok() {
                    waiting.push_back((conn, Instant::now()));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
            // out of descriptors, or the like: let some close rather than spin
            Err(_) => return,
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
/// by `deadline` and within the limits.
fn read_head(conn: &mut TcpStream, limits: Limits, deadline: Instant) -> std::result::Result<Request, HeadError> {
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
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
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
    fn idle_clients_hold_no_place_and_are_closed_when_their_time_is_up() {
        let limits = Limits {
            connections: 3,
            head_bytes: 512,
            head_time: Duration::from_secs(4),
            write_time: Duration::from_secs(5),
        };
        let addr = echo_server(limits);
        // more idle ones than places: a request is still served at once
        let idle: Vec<TcpStream> = (0..6).map(|_| TcpStream::connect(addr).unwrap()).collect();
        std::thread::sleep(Duration::from_millis(200));
        let started = Instant::now();
        assert!(exchange(addr, &[b"GET /a HTTP/1.0\r\n\r\n"]).ends_with("GET /a accept=-"));
        assert!(started.elapsed() < Duration::from_secs(3), "served after {:?}", started.elapsed());
        // idle ones are closed unread when their time is up
        for mut c in idle {
            c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
            assert_eq!(c.read(&mut [0u8; 16]).unwrap_or(0), 0);
        }
        assert!(exchange(addr, &[b"GET /b HTTP/1.0\r\n\r\n"]).ends_with("GET /b accept=-"));
    }
}
