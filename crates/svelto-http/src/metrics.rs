//! The `--metrics-listen` responder: `GET /metrics` (and `GET /`) answered with the text
//! the caller renders (svelto-server's Prometheus exposition), on the same hyper stack as
//! the HTTP front end, so no HTTP is parsed by hand anywhere. Bounded: at most
//! [`MAX_SCRAPERS`] connections at once, one request each, request heads up to
//! [`MAX_HEAD`] bytes (hyper answers 431 past it, 400 to what is not HTTP), each connection
//! cut after [`CONNECTION_TIME`]; request bodies are never read.

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, ALLOW, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

/// Renders the metrics' text for one scrape.
pub type Render = Arc<dyn Fn() -> String + Send + Sync>;

/// Connections served at once; more wait to be accepted.
const MAX_SCRAPERS: usize = 8;
/// Largest request head (request line and headers) read.
const MAX_HEAD: usize = 16 * 1024;
/// How long one connection may take, from its acceptance to its answer's last byte.
const CONNECTION_TIME: Duration = Duration::from_secs(5);

/// Answers scrapes on `listener` from a thread of its own (a current-thread tokio runtime)
/// until the process ends.
pub fn serve_metrics(listener: std::net::TcpListener, render: Render) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()?;
    std::thread::Builder::new()
        .name("svelto-metrics".into())
        .spawn(move || {
            runtime.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                    return;
                };
                accept_loop(listener, render).await;
            })
        })?;
    Ok(())
}

async fn accept_loop(listener: tokio::net::TcpListener, render: Render) {
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_SCRAPERS));
    loop {
        let Ok(slot) = slots.clone().acquire_owned().await else {
            return;
        };
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(_) => {
                // Out of descriptors and the like: wait a little rather than spin.
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let render = render.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                let render = render.clone();
                async move { Ok::<_, Infallible>(answer(&req, &render)) }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .keep_alive(false)
                .max_buf_size(MAX_HEAD)
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(CONNECTION_TIME)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            let _ = tokio::time::timeout(CONNECTION_TIME, conn).await;
            drop(slot);
        });
    }
}

fn answer(req: &Request<Incoming>, render: &Render) -> Response<Full<Bytes>> {
    let text = |status: StatusCode, body: String| {
        let mut r = Response::new(Full::new(Bytes::from(body)));
        *r.status_mut() = status;
        r.headers_mut().insert(
            CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        r
    };
    if !matches!(req.uri().path(), "/metrics" | "/") {
        return text(
            StatusCode::NOT_FOUND,
            "only GET /metrics is served here\n".into(),
        );
    }
    if !matches!(*req.method(), Method::GET | Method::HEAD) {
        let mut r = text(
            StatusCode::METHOD_NOT_ALLOWED,
            format!("{} is not served here: GET /metrics\n", req.method()),
        );
        r.headers_mut()
            .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    let mut r = text(StatusCode::OK, render());
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    fn send(addr: std::net::SocketAddr, request: &[u8]) -> String {
        let mut s = std::net::TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(20)))
            .expect("timeout");
        // The server may answer (and close) before it has read everything.
        let _ = s.write_all(request);
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    #[test]
    fn scrapes_and_bad_requests() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        serve_metrics(listener, Arc::new(|| "up 1\n".to_string())).expect("serve");
        let ok = send(addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
        assert!(ok.contains("text/plain; version=0.0.4"), "{ok}");
        assert!(ok.ends_with("\r\n\r\nup 1\n"), "{ok}");
        let old = send(addr, b"GET / HTTP/1.0\r\n\r\n");
        assert!(old.starts_with("HTTP/1.0 200 OK\r\n"), "{old}");
        let head = send(addr, b"HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
        assert!(head.ends_with("\r\n\r\n"), "{head}");
        let other = send(addr, b"GET /other HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(other.starts_with("HTTP/1.1 404 "), "{other}");
        let post = send(
            addr,
            b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\n",
        );
        assert!(post.starts_with("HTTP/1.1 405 "), "{post}");
        assert!(
            post.to_ascii_lowercase().contains("allow: get, head"),
            "{post}"
        );
        let garbage = send(addr, b"\x16\x03\x01 not http at all\r\n\r\n");
        assert!(garbage.starts_with("HTTP/1.1 400 "), "{garbage}");
        let mut big = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ".to_vec();
        big.extend(std::iter::repeat_n(b'a', 64 * 1024));
        big.extend_from_slice(b"\r\n\r\n");
        let big = send(addr, &big);
        assert!(big.starts_with("HTTP/1.1 431 "), "{big}");
        // Clients that connect and say nothing are cut off, and the next one is served.
        let _silent: Vec<_> = (0..MAX_SCRAPERS)
            .map(|_| std::net::TcpStream::connect(addr).expect("connect"))
            .collect();
        let ok = send(addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
    }
}
