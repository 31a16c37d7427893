//! A TCP relay between a front end and one etcd member that can hold etcd's answer to
//! chosen gRPC calls: the calls whose request carries a given byte string (an etcd
//! transaction putting a post-commit record, say), caught while the relay is armed. The
//! relay reads HTTP/2's frames (a 9-byte header: 24-bit length, type, flags, stream id)
//! in both directions: a request's DATA frames tell which streams to hold, and while it
//! holds, etcd's frames on those streams wait in the relay while every other frame
//! passes (the answers to other calls, HTTP/2 PINGs: the connection stays alive, the
//! front end's other etcd calls go on). Releasing sends the held frames in their order.
//!
//! HPACK: a held answer's HEADERS frames reach the client after later streams' HEADERS,
//! which is harmless as long as they add nothing to the connection's dynamic table (etcd
//! answers a warm connection's successful calls with header fields already in it).

use std::collections::{HashMap, HashSet};
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The client's connection preface, before its first frame.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const DATA: u8 = 0;

struct Shared {
    /// Catch (and hold the answers of) the calls whose request carries `needle`.
    armed: AtomicBool,
    needle: Vec<u8>,
    /// Calls caught so far.
    caught: AtomicUsize,
    /// Frames held so far.
    held_frames: AtomicUsize,
    stop: AtomicBool,
    /// Record each call's first key (see [`HoldingRelay::record`]).
    recording: AtomicBool,
    calls: Mutex<Vec<String>>,
}

/// See the module's documentation.
pub(crate) struct HoldingRelay {
    addr: std::net::SocketAddr,
    shared: Arc<Shared>,
}

impl HoldingRelay {
    /// Listens on 127.0.0.1 and relays each connection to `target` (`HOST:PORT`).
    pub(crate) fn start(target: &str, needle: &[u8]) -> HoldingRelay {
        let listener = TcpListener::bind("127.0.0.1:0").expect("relay listener");
        let addr = listener.local_addr().expect("relay address");
        let shared = Arc::new(Shared {
            armed: AtomicBool::new(false),
            needle: needle.to_vec(),
            caught: AtomicUsize::new(0),
            held_frames: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            recording: AtomicBool::new(false),
            calls: Mutex::default(),
        });
        let (target, s) = (target.to_owned(), shared.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if s.stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(client) = client else { continue };
                let Ok(server) = TcpStream::connect(&target) else {
                    // The client sees its connection closed, as with etcd down.
                    continue;
                };
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                let held: Arc<Mutex<HashSet<u32>>> = Arc::default();
                let (c2, s2, h2, sh2) = (
                    client.try_clone().expect("clone"),
                    server.try_clone().expect("clone"),
                    held.clone(),
                    s.clone(),
                );
                std::thread::spawn(move || requests(c2, s2, &h2, &sh2));
                let sh = s.clone();
                std::thread::spawn(move || answers(server, client, &held, &sh));
            }
        });
        HoldingRelay { addr, shared }
    }

    /// `http://127.0.0.1:PORT`, for a cluster file's `etcd` line.
    pub(crate) fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// From now on, the answers to calls whose request carries the needle are held.
    pub(crate) fn hold(&self) {
        self.shared.armed.store(true, Ordering::SeqCst);
    }

    /// The held answers go on (in their order), and no more calls are caught.
    pub(crate) fn release(&self) {
        self.shared.armed.store(false, Ordering::SeqCst);
    }

    /// How many calls were caught.
    pub(crate) fn caught(&self) -> usize {
        self.shared.caught.load(Ordering::SeqCst)
    }

    /// From now on, each call's first etcd key (the first `/`-led printable run of its
    /// request) is recorded, until [`HoldingRelay::recorded`].
    pub(crate) fn record(&self) {
        self.shared.calls.lock().expect("calls").clear();
        self.shared.recording.store(true, Ordering::SeqCst);
    }

    /// The calls' keys recorded since [`HoldingRelay::record`]; recording stops.
    pub(crate) fn recorded(&self) -> Vec<String> {
        self.shared.recording.store(false, Ordering::SeqCst);
        std::mem::take(&mut *self.shared.calls.lock().expect("calls"))
    }

    /// How many of etcd's frames were held.
    pub(crate) fn held_frames(&self) -> usize {
        self.shared.held_frames.load(Ordering::SeqCst)
    }
}

impl Drop for HoldingRelay {
    fn drop(&mut self) {
        self.release();
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wakes the accepting thread, which then ends.
        let _ = TcpStream::connect(self.addr);
    }
}

/// The complete frames at the start of `buf` (after `skip` bytes), drained: each one's
/// type, stream id and bytes (header included).
fn frames(buf: &mut Vec<u8>, skip: &mut usize) -> Vec<(u8, u32, Vec<u8>)> {
    let mut out = Vec::new();
    if *skip > 0 {
        let n = (*skip).min(buf.len());
        buf.drain(..n);
        *skip -= n;
        if *skip > 0 {
            return out;
        }
    }
    while buf.len() >= 9 {
        let len = (usize::from(buf[0]) << 16) | (usize::from(buf[1]) << 8) | usize::from(buf[2]);
        if buf.len() < 9 + len {
            break;
        }
        let stream = u32::from_be_bytes([buf[5], buf[6], buf[7], buf[8]]) & 0x7fff_ffff;
        let frame: Vec<u8> = buf.drain(..9 + len).collect();
        out.push((frame[3], stream, frame));
    }
    out
}

/// Front end -> etcd: bytes pass as they come; DATA frames read on the way mark their
/// stream held when armed and the stream's request so far carries the needle (marked
/// before the bytes completing the frame are passed on: etcd cannot answer first).
fn requests(mut from: TcpStream, mut to: TcpStream, held: &Mutex<HashSet<u32>>, s: &Shared) {
    let (mut buf, mut skip) = (Vec::new(), PREFACE.len());
    let mut bodies: HashMap<u32, Vec<u8>> = HashMap::new();
    let mut seen: HashSet<u32> = HashSet::new();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        let n = match from.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        buf.extend_from_slice(&chunk[..n]);
        for (kind, stream, frame) in frames(&mut buf, &mut skip) {
            if kind != DATA {
                continue;
            }
            let new = seen.insert(stream);
            if new && s.recording.load(Ordering::SeqCst) {
                let key: String = frame[9..]
                    .iter()
                    .skip_while(|b| **b != b'/')
                    .take_while(|b| b.is_ascii_graphic())
                    .map(|b| char::from(*b))
                    .collect();
                s.calls.lock().expect("calls").push(key);
            }
            if !s.armed.load(Ordering::SeqCst) {
                continue;
            }
            let body = bodies.entry(stream).or_default();
            body.extend_from_slice(&frame[9..]);
            if body
                .windows(s.needle.len())
                .any(|w| w == s.needle.as_slice())
            {
                bodies.remove(&stream);
                if held.lock().expect("held").insert(stream) {
                    s.caught.fetch_add(1, Ordering::SeqCst);
                }
            }
        }
        if to.write_all(&chunk[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

/// etcd -> front end: whole frames, those of held streams kept while armed, sent in their
/// order once released.
fn answers(mut from: TcpStream, mut to: TcpStream, held: &Mutex<HashSet<u32>>, s: &Shared) {
    from.set_read_timeout(Some(Duration::from_millis(10)))
        .expect("read timeout");
    let (mut buf, mut skip) = (Vec::new(), 0);
    let mut waiting: Vec<Vec<u8>> = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        let read = from.read(&mut chunk);
        let ended = match read {
            Ok(0) => true,
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                false
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => false,
            Err(_) => true,
        };
        let holding = s.armed.load(Ordering::SeqCst);
        let mut out = Vec::new();
        if !holding && !waiting.is_empty() {
            for frame in waiting.drain(..) {
                out.extend_from_slice(&frame);
            }
        }
        for (_, stream, frame) in frames(&mut buf, &mut skip) {
            if holding && held.lock().expect("held").contains(&stream) {
                s.held_frames.fetch_add(1, Ordering::SeqCst);
                waiting.push(frame);
            } else {
                out.extend_from_slice(&frame);
            }
        }
        if !out.is_empty() && to.write_all(&out).is_err() {
            break;
        }
        if ended {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

/// Points the cluster file `file` at `relay` instead of its etcd members (its `etcd = `
/// line replaced), so that the front end started from it reaches etcd through the relay.
pub(crate) fn through_relay(file: &std::path::Path, relay: &HoldingRelay) {
    let text = std::fs::read_to_string(file).expect("the cluster file");
    let text: String = text
        .lines()
        .map(|l| {
            if l.starts_with("etcd = ") {
                format!("etcd = {}\n", relay.endpoint())
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    std::fs::write(file, text).expect("the cluster file");
}
