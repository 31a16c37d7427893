//! The request table: one row per HTTP method Svelto serves and one per `REPORT`, with
//! the name the metrics and the request log count it under, whether it writes (a
//! shutdown waits for it, `-R` refuses it) and what mod_authz_svn checks its URL for. A new
//! report is one row here plus its request type ([`ReportRequest`]: its parser and handler).
//! The methods' dispatch is `resource::handle`'s; the reports' is [`report`].

use crate::ctx::Ctx;
use crate::error::HttpError;
use crate::xml::Elem;
use crate::{Reply, Req};

/// What a request is counted under when no row names it (an unknown method, a request
/// refused before its handler saw it), so that clients cannot make up counters.
pub(crate) const OTHER: &str = "http-other";

/// How a method touches the repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Reads only.
    Read,
    /// Writes into a commit transaction (or makes one): counted by a shutdown until
    /// answered, refused under `-R`.
    Write,
    /// Takes or gives back a lock: counted by a shutdown until answered.
    Lock,
}

/// What mod_authz_svn checks a method's URL for, before anything is read or written
/// (the service layer filters what it reads below the URL later).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UrlCheck {
    /// Read access to the URL's path.
    Read,
    /// Read access to the URL's whole subtree, with the blanket write level (`COPY`: it
    /// reads its source, the URL, and writes its `Destination`, which the commit edit
    /// checks as it adds the copy).
    ReadTree,
    /// Write access to the URL's path.
    Write,
    /// Write access to the URL's whole subtree (`DELETE`, `MOVE`, and any method not
    /// listed, as mod_authz_svn decides them).
    WriteTree,
    /// Write access anywhere in the repository (`MERGE`: its URL names no path).
    WriteAnywhere,
}

impl UrlCheck {
    /// Whether the blanket level must allow writing.
    pub fn needs_write_level(self) -> bool {
        self != UrlCheck::Read
    }

    /// Whether the authz rules are asked about a write.
    pub fn writes(self) -> bool {
        matches!(
            self,
            UrlCheck::Write | UrlCheck::WriteTree | UrlCheck::WriteAnywhere
        )
    }
}

pub(crate) struct Method {
    pub name: &'static str,
    /// What the metrics and the log's `command` call it.
    pub metric: &'static str,
    pub access: Access,
    pub check: UrlCheck,
}

const fn m(name: &'static str, metric: &'static str, access: Access, check: UrlCheck) -> Method {
    Method {
        name,
        metric,
        access,
        check,
    }
}

/// The URL check of a method, served or not: its row's, HTTP protocol v1's `CHECKOUT` and
/// `MKACTIVITY` (refused later, checked as the writes they are), else a write of the
/// whole subtree, as mod_authz_svn checks methods it does not know.
pub(crate) fn url_check(name: &str) -> UrlCheck {
    match method(name) {
        Some(m) => m.check,
        None if matches!(name, "CHECKOUT" | "MKACTIVITY") => UrlCheck::Write,
        None => UrlCheck::WriteTree,
    }
}

/// The methods served, in the order the metrics list them.
pub(crate) static METHODS: &[Method] = {
    use Access::{Lock, Read, Write};
    use UrlCheck as U;
    &[
        m("OPTIONS", "http-options", Read, U::Read),
        m("PROPFIND", "http-propfind", Read, U::Read),
        m("GET", "http-get", Read, U::Read),
        m("HEAD", "http-head", Read, U::Read),
        m("REPORT", "http-report", Read, U::Read),
        m("POST", "http-post", Write, U::WriteTree),
        m("PUT", "http-put", Write, U::Write),
        m("MKCOL", "http-mkcol", Write, U::Write),
        m("DELETE", "http-delete", Write, U::WriteTree),
        m("COPY", "http-copy", Write, U::ReadTree),
        m("PROPPATCH", "http-proppatch", Write, U::Write),
        m("MERGE", "http-merge", Write, U::WriteAnywhere),
        m("LOCK", "http-lock", Lock, U::Write),
        m("UNLOCK", "http-unlock", Lock, U::Write),
    ]
};

/// A report's request, parsed from its XML body before anything is read (no repository,
/// no URL: the parsers are a fuzz target, [`crate::parse_report`]), then answered.
pub(crate) trait ReportRequest: Sized {
    fn parse(doc: &Elem) -> Result<Self, HttpError>;
    fn answer(self, ctx: &Ctx<'_>, req: &Req) -> Result<Reply, HttpError>;
}

pub(crate) struct Report {
    /// The body's root element (in Subversion's namespace).
    pub name: &'static str,
    /// What the metrics and the request log count it under.
    pub metric: &'static str,
    /// Parses the body and answers it.
    pub handler: fn(&Ctx<'_>, &Req, &Elem) -> Result<Reply, HttpError>,
    /// Parses the body only.
    pub parse: fn(&Elem) -> Result<(), HttpError>,
}

fn handle<T: ReportRequest>(ctx: &Ctx<'_>, req: &Req, doc: &Elem) -> Result<Reply, HttpError> {
    T::parse(doc)?.answer(ctx, req)
}

fn parse<T: ReportRequest>(doc: &Elem) -> Result<(), HttpError> {
    T::parse(doc).map(drop)
}

const fn r<T: ReportRequest>(name: &'static str, metric: &'static str) -> Report {
    Report {
        name,
        metric,
        handler: handle::<T>,
        parse: parse::<T>,
    }
}

/// The reports served (every one reads), as mod_dav_svn 1.14 names them: each row names
/// its request type, which parses the body and answers it.
pub(crate) static REPORTS: &[Report] = {
    use crate::reports as rep;
    &[
        r::<crate::update::UpdateReport>("update-report", "http-update-report"),
        r::<rep::InheritedProps>("inherited-props-report", "http-inherited-props-report"),
        r::<rep::GetLocks>("get-locks-report", "http-get-locks-report"),
        r::<rep::List>("list-report", "http-list-report"),
        r::<rep::Log>("log-report", "http-log-report"),
        r::<rep::FileRevs>("file-revs-report", "http-file-revs-report"),
        r::<rep::GetLocations>("get-locations", "http-get-locations"),
        r::<rep::LocationSegments>("get-location-segments", "http-get-location-segments"),
        r::<rep::Mergeinfo>("mergeinfo-report", "http-mergeinfo-report"),
        r::<rep::DeletedRev>("get-deleted-rev-report", "http-get-deleted-rev-report"),
        r::<rep::DatedRev>("dated-rev-report", "http-dated-rev-report"),
        r::<crate::replay::ReplayReport>("replay-report", "http-replay-report"),
    ]
};

/// The web interface's pages (docs/web.md), each counted as `http-web-PAGE`: reads of
/// their URL's path, checked as a `GET` of it is.
pub(crate) static WEB: &[(svelto_web::Page, &str)] = {
    use svelto_web::Page as P;
    &[
        (P::Browse, "http-web-browse"),
        (P::Raw, "http-web-raw"),
        (P::Log, "http-web-log"),
        (P::Rev, "http-web-rev"),
        (P::Blame, "http-web-blame"),
        (P::Diff, "http-web-diff"),
        (P::Search, "http-web-search"),
        (P::Archive, "http-web-archive"),
    ]
};

/// The parent path's list of repositories (a `GET` of the parent path).
pub(crate) const WEB_REPOS: &str = "http-web-repos";

/// The metric of a web page.
pub(crate) fn web_metric(page: svelto_web::Page) -> &'static str {
    WEB.iter()
        .find(|(p, _)| *p == page)
        .map_or(OTHER, |(_, m)| m)
}

/// The row of a method, if Svelto serves it.
pub(crate) fn method(name: &str) -> Option<&'static Method> {
    METHODS.iter().find(|m| m.name == name)
}

/// The row of a report, if Svelto serves it.
pub(crate) fn report(name: &str) -> Option<&'static Report> {
    REPORTS.iter().find(|r| r.name == name)
}

/// Every name the metrics count HTTP requests under, in the table's order.
pub(crate) fn metric_names() -> impl Iterator<Item = &'static str> {
    METHODS
        .iter()
        .map(|m| m.metric)
        .chain(REPORTS.iter().map(|r| r.metric))
        .chain(WEB.iter().map(|(_, m)| *m))
        .chain([WEB_REPOS, OTHER])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_follow_the_rows() {
        let names: Vec<_> = metric_names().collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "{names:?}");
        for m in METHODS {
            assert_eq!(m.metric, format!("http-{}", m.name.to_ascii_lowercase()));
        }
        for r in REPORTS {
            assert_eq!(r.metric, format!("http-{}", r.name));
            assert!(std::ptr::eq(report(r.name).expect("found"), r));
        }
        assert!(method("PROPPATCH").is_some_and(|m| m.access == Access::Write));
        assert!(method("LOCK").is_some_and(|m| m.access == Access::Lock));
        assert!(method("GET").is_some_and(|m| m.access == Access::Read));
        assert!(method("TRACE").is_none() && report("bogus-report").is_none());
        // mod_authz_svn's lists: reads, subtree writes, the unknown as a subtree write.
        for (name, check) in [
            ("GET", UrlCheck::Read),
            ("PROPFIND", UrlCheck::Read),
            ("COPY", UrlCheck::ReadTree),
            ("PUT", UrlCheck::Write),
            ("CHECKOUT", UrlCheck::Write),
            ("DELETE", UrlCheck::WriteTree),
            ("MOVE", UrlCheck::WriteTree),
            ("BREW", UrlCheck::WriteTree),
            ("MERGE", UrlCheck::WriteAnywhere),
        ] {
            assert_eq!(url_check(name), check, "{name}");
        }
        assert!(UrlCheck::ReadTree.needs_write_level() && !UrlCheck::ReadTree.writes());
        // Every page of the web interface has its row, named after its URL segment.
        for page in svelto_web::Page::ALL {
            assert_eq!(web_metric(page), format!("http-web-{}", page.slug()));
        }
    }
}
