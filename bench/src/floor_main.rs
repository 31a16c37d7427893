//! `svelto-floor`: the client's floor for bench/serve.sh (see `svelto_bench::floor`).
//!
//! ```text
//! svelto-floor record UPSTREAM_PORT FILE   # a proxy to 127.0.0.1:UPSTREAM_PORT that records
//! svelto-floor replay FILE                 # answers the recorded requests from memory
//! ```
//! Both listen on 127.0.0.1, on a port of their choice, which they print on standard
//! output ("port N") once they listen, and run until killed. A replayed connection
//! whose client sends something not recorded is closed, with a message on standard error.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

use svelto_bench::floor::{fold, read_recording, write_header, write_record, Items, START};

const USAGE: &str = "usage: svelto-floor record UPSTREAM_PORT FILE | svelto-floor replay FILE";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["record", port, file] => match port.parse::<u16>() {
            Ok(p) => record(p, file),
            Err(_) => Err(format!("bad port '{port}'\n{USAGE}")),
        },
        ["replay", file] => replay(file),
        _ => Err(USAGE.to_string()),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("svelto-floor: {e}");
            ExitCode::FAILURE
        }
    }
}

fn bind() -> Result<(TcpListener, u16), String> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("listening: {e}"))?;
    let port = l.local_addr().map_err(|e| e.to_string())?.port();
    Ok((l, port))
}

/// Says on standard output that the port takes connections (a replay: once loaded).
fn ready(port: u16) -> Result<(), String> {
    println!("port {port}");
    io::stdout().flush().map_err(|e| e.to_string())
}

/// Which connection first reached each history: only its bytes are recorded (concurrent
/// clients running the same command send the same requests and get the same answers).
type Owners = Mutex<HashMap<u64, u64>>;

struct Recorder {
    out: Mutex<BufWriter<File>>,
    owners: Owners,
}

fn record(upstream: u16, file: &str) -> Result<(), String> {
    let mut out = BufWriter::new(File::create(file).map_err(|e| format!("{file}: {e}"))?);
    let (listener, port) = bind()?;
    write_header(&mut out, port).map_err(|e| e.to_string())?;
    out.flush().map_err(|e| e.to_string())?;
    ready(port)?;
    let rec = Arc::new(Recorder {
        out: Mutex::new(out),
        owners: Mutex::new(HashMap::new()),
    });
    for (id, conn) in (1u64..).zip(listener.incoming()) {
        let Ok(client) = conn else { continue };
        let rec = rec.clone();
        thread::spawn(move || {
            if let Err(e) = proxy(id, client, upstream, &rec) {
                eprintln!("svelto-floor: connection {id}: {e}");
            }
        });
    }
    Ok(())
}

/// Makes connection `id` the owner of history `key` unless another is; a new history
/// gets an empty record, so that the replay knows every request that was made.
fn own(rec: &Recorder, key: u64, id: u64) -> io::Result<()> {
    let mut owners = rec.owners.lock().unwrap_or_else(|e| e.into_inner());
    if owners.contains_key(&key) {
        return Ok(());
    }
    owners.insert(key, id);
    drop(owners);
    let mut out = rec.out.lock().unwrap_or_else(|e| e.into_inner());
    write_record(&mut *out, key, &[])?;
    out.flush()
}

fn proxy(id: u64, client: TcpStream, upstream: u16, rec: &Arc<Recorder>) -> io::Result<()> {
    let server = TcpStream::connect(("127.0.0.1", upstream))?;
    client.set_nodelay(true)?;
    server.set_nodelay(true)?;
    let key = Arc::new(AtomicU64::new(START));
    own(rec, START, id)?;
    // Server to client: record under the history the client has sent so far.
    let down = {
        let (mut from, mut to) = (server.try_clone()?, client.try_clone()?);
        let (key, rec) = (key.clone(), rec.clone());
        thread::spawn(move || -> io::Result<()> {
            let mut buf = vec![0u8; 1 << 16];
            loop {
                let n = from.read(&mut buf)?;
                if n == 0 {
                    let _ = to.shutdown(Shutdown::Write);
                    return Ok(());
                }
                let k = key.load(Ordering::SeqCst);
                let mine =
                    rec.owners.lock().unwrap_or_else(|e| e.into_inner()).get(&k) == Some(&id);
                if mine {
                    let mut out = rec.out.lock().unwrap_or_else(|e| e.into_inner());
                    write_record(&mut *out, k, &buf[..n])?;
                    out.flush()?;
                }
                to.write_all(&buf[..n])?;
            }
        })
    };
    // Client to server: the history moves on before the item reaches the server.
    let (mut from, mut to) = (client, server);
    let mut items = Items::default();
    let mut buf = vec![0u8; 1 << 16];
    let mut h = START;
    loop {
        let n = from.read(&mut buf)?;
        if n == 0 {
            let _ = to.shutdown(Shutdown::Write);
            break;
        }
        let mut seen = Vec::new();
        items.feed(&buf[..n], |item| {
            h = fold(h, item);
            seen.push(h);
        })?;
        for k in seen {
            own(rec, k, id)?;
        }
        key.store(h, Ordering::SeqCst);
        to.write_all(&buf[..n])?;
    }
    down.join().unwrap_or(Ok(()))
}

fn replay(file: &str) -> Result<(), String> {
    let (listener, port) = bind()?;
    let mut f = File::open(file).map_err(|e| format!("{file}: {e}"))?;
    let map = Arc::new(read_recording(&mut f, port).map_err(|e| format!("{file}: {e}"))?);
    ready(port)?;
    for (id, conn) in (1u64..).zip(listener.incoming()) {
        let Ok(client) = conn else { continue };
        let map = map.clone();
        thread::spawn(move || {
            if let Err(e) = answer(client, &map) {
                eprintln!("svelto-floor: connection {id}: {e}");
            }
        });
    }
    Ok(())
}

fn answer(mut client: TcpStream, map: &HashMap<u64, Vec<u8>>) -> io::Result<()> {
    client.set_nodelay(true)?;
    let mut out = client.try_clone()?;
    if let Some(b) = map.get(&START) {
        out.write_all(b)?;
    }
    let mut items = Items::default();
    let mut buf = vec![0u8; 1 << 16];
    let mut h = START;
    loop {
        let n = client.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        let mut replies: Vec<Option<&[u8]>> = Vec::new();
        items.feed(&buf[..n], |item| {
            h = fold(h, item);
            replies.push(map.get(&h).map(Vec::as_slice));
        })?;
        for r in replies {
            // Every request recorded has its entry, if only an empty one.
            let r = r.ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    "a request that was not recorded",
                )
            })?;
            out.write_all(r)?;
        }
    }
}
