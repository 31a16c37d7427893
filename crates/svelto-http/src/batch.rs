//! A connection's writes gathered into fewer system calls: the answers to pipelined
//! requests (ra_serf keeps several `GET`s in flight on each connection) go out together,
//! in one write, instead of one write (and one TCP segment, one wake-up of the client)
//! each.
//!
//! hyper flushes after every response unless its `pipeline_flush` is on, and that option
//! holds every byte of every queued answer in one unbounded buffer (a client that did not
//! read a 64 MiB `GET` grew the server by 165 MB). Here the buffer is bounded: at most
//! [`BATCH`] bytes wait; a write that would pass that goes out at once, with what waits
//! before it, in one `writev`. What waits goes out as soon as the connection would
//! otherwise wait: when the next request has not arrived yet (a read finds nothing), or
//! when the answer being written waits for its handler ([`Batched::urgent`]).

use std::cell::Cell;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::conns::Conn;

/// The most a connection holds back, in bytes.
pub(crate) const BATCH: usize = 64 * 1024;

/// A connection's stream whose writes are gathered (see the module's comment).
pub(crate) struct Batched<S> {
    io: S,
    /// Written by hyper, not yet to the stream (at most [`BATCH`] bytes).
    buf: Vec<u8>,
    /// Set by whatever makes the connection wait for something other than the client (a
    /// handler still answering, a streamed body's next piece): the next flush writes what
    /// waits.
    urgent: Rc<Cell<bool>>,
    /// The connection's entry in the table, told when bytes move (its watchdog closes a
    /// connection whose request moves none for too long).
    conn: Option<Arc<Conn>>,
}

impl<S> Batched<S> {
    pub fn new(io: S, conn: Option<Arc<Conn>>) -> Batched<S> {
        Batched {
            io,
            buf: Vec::new(),
            urgent: Rc::new(Cell::new(false)),
            conn,
        }
    }

    fn moved(&self) {
        if let Some(c) = &self.conn {
            c.moved();
        }
    }

    /// The flag that makes the next flush write what waits.
    pub fn urgent(&self) -> Rc<Cell<bool>> {
        self.urgent.clone()
    }
}

impl<S: AsyncWrite + Unpin> Batched<S> {
    /// Writes out everything held back.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.buf.is_empty() {
            let n = ready!(Pin::new(&mut self.io).poll_write(cx, &self.buf))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.moved();
            self.buf.drain(..n);
        }
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for Batched<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match Pin::new(&mut this.io).poll_read(cx, out) {
            Poll::Pending => {
                // Nothing more to answer for now: the client gets what waits, and the
                // buffer is given back (an idle connection holds none).
                ready!(this.poll_drain(cx))?;
                this.buf = Vec::new();
                ready!(Pin::new(&mut this.io).poll_flush(cx))?;
                Poll::Pending
            }
            ready => {
                this.moved();
                ready
            }
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Batched<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_vectored(cx, &[IoSlice::new(data)])
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let total: usize = bufs.iter().map(|b| b.len()).sum();
        if this.buf.len() + total <= BATCH {
            for b in bufs {
                this.buf.extend_from_slice(b);
            }
            return Poll::Ready(Ok(total));
        }
        // Too much to hold back: what waits goes out with it, in one write.
        const MAX: usize = 64;
        loop {
            if this.buf.is_empty() {
                let n = ready!(Pin::new(&mut this.io).poll_write_vectored(cx, bufs))?;
                this.moved();
                return Poll::Ready(Ok(n));
            }
            let mut iov = [IoSlice::new(&[]); MAX + 1];
            iov[0] = IoSlice::new(&this.buf);
            let k = bufs.len().min(MAX);
            iov[1..=k].copy_from_slice(&bufs[..k]);
            let n = ready!(Pin::new(&mut this.io).poll_write_vectored(cx, &iov[..=k]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            this.moved();
            if n <= this.buf.len() {
                this.buf.drain(..n);
                continue;
            }
            let taken = n - this.buf.len();
            this.buf.clear();
            return Poll::Ready(Ok(taken));
        }
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        // hyper flushes after every answer; what waits goes out when the connection would
        // wait (the next read finds nothing, or `urgent`), or with a write that fills it.
        if !this.urgent.get() {
            return Poll::Ready(Ok(()));
        }
        ready!(this.poll_drain(cx))?;
        this.urgent.set(false);
        Pin::new(&mut this.io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}
