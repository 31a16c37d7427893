//! A bare svn:// client over a TcpStream, for feeding a server what the
//! stock client never sends. A small item reader of its own (the tests do
//! not trust the codec under test).

use std::fmt;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// The most a test reads for one string (the servers under test never send
/// more in these tests).
const MAX_STRING: u64 = 64 << 20;

#[derive(Clone, PartialEq, Eq)]
pub enum Item {
    Number(u64),
    String(Vec<u8>),
    Word(String),
    List(Vec<Item>),
}

impl Item {
    /// `( success ...)`.
    pub fn is_success(&self) -> bool {
        matches!(self, Item::List(items) if items.first() == Some(&Item::Word("success".into())))
    }

    /// `( failure ...)`.
    pub fn is_failure(&self) -> bool {
        matches!(self, Item::List(items) if items.first() == Some(&Item::Word("failure".into())))
    }

    /// The error codes of a `( failure ( ( code msg file line ) ... ) )`.
    pub fn error_codes(&self) -> Vec<u64> {
        let Item::List(items) = self else {
            return Vec::new();
        };
        let Some(Item::List(errors)) = items.get(1) else {
            return Vec::new();
        };
        errors
            .iter()
            .filter_map(|e| match e {
                Item::List(fields) => match fields.first() {
                    Some(Item::Number(n)) => Some(*n),
                    _ => None,
                },
                _ => None,
            })
            .collect()
    }
}

impl fmt::Debug for Item {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Item::Number(n) => write!(f, "{n}"),
            Item::String(s) => write!(f, "{}:{}", s.len(), String::from_utf8_lossy(s)),
            Item::Word(w) => write!(f, "{w}"),
            Item::List(items) => {
                write!(f, "( ")?;
                for item in items {
                    write!(f, "{item:?} ")?;
                }
                write!(f, ")")
            }
        }
    }
}

/// How reading from the server ended.
#[derive(Debug)]
pub enum ReadEnd {
    /// The server closed the connection (end of file or reset).
    Closed,
    /// Nothing came for the read timeout.
    TimedOut,
    /// Bytes that are not items (what was wrong).
    Malformed(#[allow(dead_code)] String),
}

pub struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    pos: usize,
    /// Every byte received, for checks that something never leaks.
    pub received: Vec<u8>,
}

impl Conn {
    /// Connect and read the greeting.
    pub fn open(addr: SocketAddr) -> (Conn, Item) {
        let stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("set a read timeout");
        let mut conn = Conn {
            stream,
            buf: Vec::new(),
            pos: 0,
            received: Vec::new(),
        };
        let greeting = conn.item();
        assert!(greeting.is_success(), "greeting: {greeting:?}");
        (conn, greeting)
    }

    /// The client's response to the greeting for `url`.
    pub fn send_client_response(&mut self, url: &str) {
        let mut msg =
            b"( 2 ( edit-pipeline svndiff1 absent-entries depth mergeinfo log-revprops ) ".to_vec();
        msg.extend_from_slice(format!("{}:{url} ", url.len()).as_bytes());
        msg.extend_from_slice(b"10:raw-client ( ) ) ");
        self.send(&msg);
    }

    /// A whole session on `url`: greeting, response, anonymous auth,
    /// repos-info.
    pub fn session(addr: SocketAddr, url: &str) -> Conn {
        let (mut conn, _) = Conn::open(addr);
        conn.send_client_response(url);
        let auth = conn.item();
        assert!(auth.is_success(), "auth request for {url}: {auth:?}");
        let wants_auth = matches!(&auth, Item::List(i) if matches!(i.get(1), Some(Item::List(p)) if matches!(p.first(), Some(Item::List(m)) if !m.is_empty())));
        if wants_auth {
            conn.send(b"( ANONYMOUS ( 0: ) ) ");
            let ok = conn.item();
            assert!(ok.is_success(), "anonymous auth: {ok:?}");
        }
        let info = conn.item();
        assert!(info.is_success(), "repos-info: {info:?}");
        conn
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.stream
            .write_all(bytes)
            .unwrap_or_else(|e| panic!("sending {:?}: {e}", String::from_utf8_lossy(bytes)));
    }

    /// Send, ignoring a connection the server already closed.
    pub fn send_lossy(&mut self, bytes: &[u8]) {
        let _ = self.stream.write_all(bytes);
    }

    /// The next item; panics if there is none.
    pub fn item(&mut self) -> Item {
        match self.read_item() {
            Ok(item) => item,
            Err(end) => panic!(
                "expected an item, got {end:?}; received so far: {:?}",
                String::from_utf8_lossy(&self.received)
            ),
        }
    }

    /// `( get-latest-rev ( ) )` on an established session: the slot, then
    /// the revision.
    pub fn latest_rev(&mut self) -> u64 {
        self.send(b"( get-latest-rev ( ) ) ");
        let slot = self.item();
        assert!(slot.is_success(), "slot: {slot:?}");
        match self.item() {
            Item::List(items) if items.len() == 2 => match &items[1] {
                Item::List(r) => match r.first() {
                    Some(Item::Number(n)) => *n,
                    other => panic!("get-latest-rev answered {other:?}"),
                },
                other => panic!("get-latest-rev answered {other:?}"),
            },
            other => panic!("get-latest-rev answered {other:?}"),
        }
    }

    /// Read items until the server closes the connection; `Ok(items)` if it
    /// does within `within`, `Err(items)` if it is still open then.
    pub fn until_closed(&mut self, within: Duration) -> Result<Vec<Item>, Vec<Item>> {
        let deadline = Instant::now() + within;
        let mut items = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            self.stream
                .set_read_timeout(Some(left.max(Duration::from_millis(10))))
                .expect("set a read timeout");
            match self.read_item() {
                Ok(item) => items.push(item),
                Err(ReadEnd::Closed) | Err(ReadEnd::Malformed(_)) => return Ok(items),
                Err(ReadEnd::TimedOut) => {
                    if Instant::now() >= deadline {
                        return Err(items);
                    }
                }
            }
        }
    }

    fn byte(&mut self) -> Result<u8, ReadEnd> {
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
            let mut chunk = [0u8; 64 * 1024];
            match self.stream.read(&mut chunk) {
                Ok(0) => return Err(ReadEnd::Closed),
                Ok(n) => {
                    self.buf.extend_from_slice(&chunk[..n]);
                    self.received.extend_from_slice(&chunk[..n]);
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Err(ReadEnd::TimedOut)
                }
                Err(_) => return Err(ReadEnd::Closed),
            }
        }
        let b = self.buf[self.pos];
        self.pos += 1;
        Ok(b)
    }

    pub fn read_item(&mut self) -> Result<Item, ReadEnd> {
        let mut b = self.byte()?;
        while b == b' ' || b == b'\n' {
            b = self.byte()?;
        }
        self.item_from(b, 0)
    }

    fn item_from(&mut self, first: u8, depth: usize) -> Result<Item, ReadEnd> {
        let malformed = |what: &str| Err(ReadEnd::Malformed(what.to_owned()));
        if depth > 64 {
            return malformed("nested too deeply");
        }
        if first.is_ascii_digit() {
            let mut n = u64::from(first - b'0');
            loop {
                let b = self.byte()?;
                if b.is_ascii_digit() {
                    n = match n
                        .checked_mul(10)
                        .and_then(|n| n.checked_add(u64::from(b - b'0')))
                    {
                        Some(n) => n,
                        None => return malformed("number overflow"),
                    };
                } else if b == b':' {
                    if n > MAX_STRING {
                        return malformed("string too long for the test reader");
                    }
                    let mut s = Vec::with_capacity(n as usize);
                    for _ in 0..n {
                        s.push(self.byte()?);
                    }
                    return self.terminator(Item::String(s));
                } else if b == b' ' || b == b'\n' {
                    return Ok(Item::Number(n));
                } else {
                    return malformed("bad byte after digits");
                }
            }
        } else if first.is_ascii_alphabetic() {
            let mut w = vec![first];
            loop {
                let b = self.byte()?;
                if b.is_ascii_alphanumeric() || b == b'-' {
                    w.push(b);
                } else if b == b' ' || b == b'\n' {
                    return Ok(Item::Word(String::from_utf8_lossy(&w).into_owned()));
                } else {
                    return malformed("bad byte in a word");
                }
            }
        } else if first == b'(' {
            let mut items = Vec::new();
            loop {
                let mut b = self.byte()?;
                while b == b' ' || b == b'\n' {
                    b = self.byte()?;
                }
                if b == b')' {
                    return self.terminator(Item::List(items));
                }
                items.push(self.item_from(b, depth + 1)?);
            }
        } else {
            malformed("bad first byte of an item")
        }
    }

    fn terminator(&mut self, item: Item) -> Result<Item, ReadEnd> {
        match self.byte()? {
            b' ' | b'\n' => Ok(item),
            _ => Err(ReadEnd::Malformed("no whitespace after an item".into())),
        }
    }
}

/// A protocol string item: `LEN:bytes `.
pub fn string(bytes: &[u8]) -> Vec<u8> {
    let mut out = format!("{}:", bytes.len()).into_bytes();
    out.extend_from_slice(bytes);
    out.push(b' ');
    out
}
