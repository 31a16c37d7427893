//! A session with a repository, whichever its access scheme: svn:// and svn+ssh://
//! ([`crate::ra_svn`]) or http(s):// ([`crate::ra_dav`]). Checkout, export and update ask through [`Ra`] and
//! receive the update drive as svn://'s editor commands (`( add-file ( ... ) )`), which
//! the HTTP session makes from the update-report's XML as it streams.

use svelto_wire::Item;

use crate::error::{Error, Result};
use crate::ra_svn::{self, Credentials, Session, Transport};
use crate::url::SvnUrl;

/// Inherited properties: `(repository relpath, props)`, the root first.
pub type Iprops = Vec<(Vec<u8>, Vec<(Vec<u8>, Vec<u8>)>)>;

/// One path of the report the client makes of its working copy.
#[derive(Debug, Clone)]
pub struct ReportPath {
    /// Relative to the session URL ("" for itself).
    pub path: String,
    pub rev: u64,
    pub start_empty: bool,
    pub depth: String,
    /// Reported as missing (`delete-path`): the server sends it as added.
    pub missing: bool,
}

/// What checkout, export and update need of a session.
pub trait Ra {
    fn uuid(&self) -> &str;
    /// The repository root URL, spelled as the session URL is.
    fn root_url(&self) -> &str;
    /// The session URL.
    fn url(&self) -> &str;
    fn latest_rev(&mut self) -> Result<u64>;
    /// The youngest revision at `date` (an `svn:date`).
    fn dated_rev(&mut self, date: &str) -> Result<u64>;
    /// The kind of the session path at `rev`: `none`, `file` or `dir`.
    fn check_path(&mut self, rev: u64) -> Result<String>;
    /// The properties the session path inherits at `rev`; None when the server cannot
    /// tell (an older server).
    fn inherited_props(&mut self, rev: u64) -> Result<Option<Iprops>>;
    /// Starts an update drive to `rev` (`depth`: the requested depth word, `unknown` for
    /// none) from the working copy `report` describes; `target`: one entry of the session
    /// directory the drive is limited to ("" for the directory itself).
    fn update(&mut self, rev: u64, target: &str, depth: &str, report: &[ReportPath]) -> Result<()>;
    /// Starts a switch drive: as [`Ra::update`] of the session directory, but to `url` (a
    /// URL of the same repository), ancestry ignored, as `svn switch --ignore-ancestry`
    /// (and svn's switch of an external whose URL changed) asks for it.
    fn switch(&mut self, rev: u64, url: &str, depth: &str, report: &[ReportPath]) -> Result<()>;
    /// The next editor command of the drive.
    fn next_edit(&mut self) -> Result<Item>;
    /// After `close-edit`: the end of the drive.
    fn close_edit(&mut self) -> Result<()>;
    /// After `abort-edit`: the error to report.
    fn abort_edit(&mut self) -> Error;
}

/// Opens a session on `url`, by its scheme.
pub fn open(url: &str, creds: &Credentials) -> Result<Box<dyn Ra>> {
    let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    match scheme.as_deref() {
        Some("http") | Some("https") => Ok(Box::new(crate::ra_dav::DavSession::open(url, creds)?)),
        _ => {
            let url = SvnUrl::parse(url)?;
            if url.tunnel.is_some() {
                Ok(Box::new(Session::open_tunnel(&url, creds)?))
            } else {
                Ok(Box::new(Session::open(&url, creds)?))
            }
        }
    }
}

impl<T: Transport> Ra for Session<T> {
    fn uuid(&self) -> &str {
        &self.uuid
    }

    fn root_url(&self) -> &str {
        &self.root_url
    }

    fn url(&self) -> &str {
        &self.url
    }

    fn latest_rev(&mut self) -> Result<u64> {
        Session::latest_rev(self)
    }

    fn dated_rev(&mut self, date: &str) -> Result<u64> {
        let r = self.call("get-dated-rev", vec![Item::string(date)])?;
        r.first()
            .and_then(Item::as_number)
            .ok_or_else(|| ra_svn::protocol("in get-dated-rev", "no revision number"))
    }

    fn check_path(&mut self, rev: u64) -> Result<String> {
        Session::check_path(self, "", rev)
    }

    fn inherited_props(&mut self, rev: u64) -> Result<Option<Iprops>> {
        if !self.has_cap("inherited-props") {
            return Ok(None);
        }
        Session::inherited_props(self, rev).map(Some)
    }

    fn update(&mut self, rev: u64, target: &str, depth: &str, report: &[ReportPath]) -> Result<()> {
        self.command(
            "update",
            vec![
                Item::list(vec![Item::Number(rev)]),
                Item::string(target.as_bytes()),
                Item::bool(true),
                Item::word(depth),
                Item::bool(false),
                Item::bool(false),
            ],
        )?;
        report_state(self, report)
    }

    fn switch(&mut self, rev: u64, url: &str, depth: &str, report: &[ReportPath]) -> Result<()> {
        self.command(
            "switch",
            vec![
                Item::list(vec![Item::Number(rev)]),
                Item::string(""),
                Item::bool(true),
                Item::string(url.as_bytes()),
                Item::word(depth),
                Item::bool(false),
                Item::bool(true),
            ],
        )?;
        report_state(self, report)
    }

    fn next_edit(&mut self) -> Result<Item> {
        self.read_item("in the update drive")
    }

    fn close_edit(&mut self) -> Result<()> {
        self.send(&svelto_wire::success(vec![]))?;
        let resp = self.read_item("reading the response to update")?;
        ra_svn::success(&resp, "in the response to update")?;
        Ok(())
    }

    fn abort_edit(&mut self) -> Error {
        let result = self.send(&svelto_wire::success(vec![])).and_then(|()| {
            let resp = self.read_item("reading the failure after abort-edit")?;
            ra_svn::success(&resp, "after abort-edit").map(|_| ())
        });
        match result {
            Err(e) => e,
            Ok(()) => ra_svn::protocol("in the update drive", "the server aborted the edit"),
        }
    }
}

/// The report of an update or switch (svn://): the working copy's state, then
/// finish-report and the auth slot before the drive.
fn report_state<T: Transport>(s: &mut Session<T>, report: &[ReportPath]) -> Result<()> {
    for p in report {
        // A missing path below the root is only deleted, as svn reports it (the root is
        // always set first).
        if p.missing && !p.path.is_empty() {
            s.send(&svelto_wire::command(
                "delete-path",
                vec![Item::string(p.path.as_bytes())],
            ))?;
            continue;
        }
        s.send(&svelto_wire::command(
            "set-path",
            vec![
                Item::string(p.path.as_bytes()),
                Item::Number(p.rev),
                Item::bool(p.start_empty),
                Item::empty_list(),
                Item::word(&p.depth),
            ],
        ))?;
        if p.missing {
            s.send(&svelto_wire::command(
                "delete-path",
                vec![Item::string(p.path.as_bytes())],
            ))?;
        }
    }
    s.send(&svelto_wire::command("finish-report", vec![]))?;
    // The second auth slot, before the drive.
    let slot = s.read_item("reading the auth slot after the report")?;
    ra_svn::success(&slot, "in the auth slot after the report")?;
    Ok(())
}
