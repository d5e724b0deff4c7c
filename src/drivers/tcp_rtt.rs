//! The round-trip time the kernel keeps for each TCP connection of this machine to a
//! peer, read through sock_diag netlink (as `ss -ti` reads it): the smoothed RTT of the
//! connections a program such as iperf3 opened, sampled while it runs. A link whose RTT
//! is high needs more streams to fill it, and this figure says why.

use std::net::{IpAddr, SocketAddr};

const SOCK_DIAG_BY_FAMILY: u16 = 20;
const INET_DIAG_INFO: u16 = 2;
const TCP_ESTABLISHED: u32 = 1;
/// The length of `struct inet_diag_msg`, after which its attributes begin.
const DIAG_MSG: usize = 72;
/// Where `struct tcp_info` holds `tcpi_rtt` (µs), `tcpi_bytes_acked` and
/// `tcpi_bytes_received` (kernels since 4.1).
const RTT_AT: usize = 68;
const ACKED_AT: usize = 120;
const RECEIVED_AT: usize = 128;

/// One established connection to the peer: its smoothed RTT in µs and the bytes it
/// carried (acknowledged by the peer plus received from it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Connection {
    pub rtt_us: u32,
    pub bytes: u64,
}

/// Each established TCP connection of this machine to `peer`, from the kernel.
pub fn connections(peer: SocketAddr) -> std::io::Result<Vec<Connection>> {
    let fd = Socket::open()?;
    fd.send(&request(peer.ip()))?;
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = fd.recv(&mut buf)?;
        let (found, done) = replies(&buf[..n], peer);
        out.extend(found);
        if done || n == 0 {
            return Ok(out);
        }
    }
}

/// A dump request for the established TCP sockets of `ip`'s family, with their tcp_info.
fn request(ip: IpAddr) -> Vec<u8> {
    let family = if ip.is_ipv4() { libc::AF_INET } else { libc::AF_INET6 } as u8;
    let mut msg = Vec::with_capacity(72);
    msg.extend_from_slice(&72u32.to_ne_bytes()); // nlmsg_len: 16 of header, 56 of request
    msg.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    msg.extend_from_slice(&((libc::NLM_F_REQUEST | libc::NLM_F_DUMP) as u16).to_ne_bytes());
    msg.extend_from_slice(&[0; 8]); // sequence and port id
    msg.extend_from_slice(&[family, libc::IPPROTO_TCP as u8, 1 << (INET_DIAG_INFO - 1), 0]);
    msg.extend_from_slice(&(1u32 << TCP_ESTABLISHED).to_ne_bytes());
    msg.extend_from_slice(&[0; 48]); // the socket id: a dump of every one
    msg
}

/// The connections to `peer` in one datagram of replies, and whether the dump ended.
fn replies(mut buf: &[u8], peer: SocketAddr) -> (Vec<Connection>, bool) {
    let mut out = Vec::new();
    while buf.len() >= 16 {
        let len = u32::from_ne_bytes(buf[0..4].try_into().unwrap_or_default()) as usize;
        let kind = u16::from_ne_bytes(buf[4..6].try_into().unwrap_or_default());
        if len < 16 || len > buf.len() {
            break;
        }
        if kind == libc::NLMSG_DONE as u16 || kind == libc::NLMSG_ERROR as u16 {
            return (out, true);
        }
        out.extend(connection(&buf[16..len], peer));
        buf = buf.get((len + 3) & !3..).unwrap_or_default();
    }
    (out, false)
}

/// The connection one `inet_diag_msg` (`msg`, its attributes after it) describes, if its
/// far end is `peer`.
fn connection(msg: &[u8], peer: SocketAddr) -> Option<Connection> {
    let id = msg.get(4..52)?;
    let port = u16::from_be_bytes([id[2], id[3]]);
    let ip = match peer.ip() {
        IpAddr::V4(_) => IpAddr::from(<[u8; 4]>::try_from(&id[20..24]).ok()?),
        IpAddr::V6(_) => IpAddr::from(<[u8; 16]>::try_from(&id[20..36]).ok()?),
    };
    if port != peer.port() || ip != peer.ip() {
        return None;
    }
    let mut attrs = msg.get(DIAG_MSG..)?;
    while attrs.len() >= 4 {
        let len = u16::from_ne_bytes([attrs[0], attrs[1]]) as usize;
        let kind = u16::from_ne_bytes([attrs[2], attrs[3]]);
        if len < 4 || len > attrs.len() {
            return None;
        }
        if kind == INET_DIAG_INFO {
            let info = &attrs[4..len];
            let u32_at = |at: usize| Some(u32::from_ne_bytes(info.get(at..at + 4)?.try_into().ok()?));
            let u64_at = |at: usize| Some(u64::from_ne_bytes(info.get(at..at + 8)?.try_into().ok()?));
            let bytes = u64_at(ACKED_AT).unwrap_or(0) + u64_at(RECEIVED_AT).unwrap_or(0);
            return Some(Connection { rtt_us: u32_at(RTT_AT)?, bytes });
        }
        attrs = attrs.get((len + 3) & !3..).unwrap_or_default();
    }
    None
}

/// A sock_diag netlink socket, closed when dropped.
struct Socket(libc::c_int);

impl Socket {
    fn open() -> std::io::Result<Socket> {
        // SAFETY: socket(2) with constant arguments; the descriptor is owned here.
        let fd =
            unsafe { libc::socket(libc::AF_NETLINK, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, libc::NETLINK_SOCK_DIAG) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // a dump that hangs must not hold a run's sampler: a second at most
        let timeout = libc::timeval { tv_sec: 1, tv_usec: 0 };
        // SAFETY: a timeval of the size given, on the descriptor opened above.
        unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                (&timeout as *const libc::timeval).cast(),
                std::mem::size_of::<libc::timeval>() as libc::socklen_t,
            )
        };
        Ok(Socket(fd))
    }

    fn send(&self, msg: &[u8]) -> std::io::Result<()> {
        // SAFETY: a zeroed sockaddr_nl addresses the kernel.
        let mut to: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        to.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        // SAFETY: msg is valid for reads of its length, `to` of its size.
        let sent = unsafe {
            libc::sendto(
                self.0,
                msg.as_ptr().cast(),
                msg.len(),
                0,
                (&to as *const libc::sockaddr_nl).cast(),
                std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        };
        if sent < 0 { Err(std::io::Error::last_os_error()) } else { Ok(()) }
    }

    fn recv(&self, buf: &mut [u8]) -> std::io::Result<usize> {
        // SAFETY: buf is valid for writes of its length.
        let n = unsafe { libc::recv(self.0, buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n < 0 { Err(std::io::Error::last_os_error()) } else { Ok(n as usize) }
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        // SAFETY: the descriptor is this Socket's own.
        unsafe { libc::close(self.0) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A listener and a connection to it on loopback: the kernel's table has the
    /// connection, with its RTT and bytes, and not the listener's side of it (whose far
    /// end is the client).
    #[test]
    fn a_connection_to_a_peer_is_found_with_its_rtt() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let peer = listener.local_addr().unwrap();
        let mut client = std::net::TcpStream::connect(peer).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        use std::io::{Read, Write};
        client.write_all(&[7; 1000]).unwrap();
        server.read_exact(&mut [0; 1000]).unwrap();
        let found = connections(peer).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].rtt_us > 0, "{found:?}");
        assert!(found[0].bytes >= 1000, "{found:?}");
    }
}
