//! The routing hook of the web interface (`docs/web.md`, the pages are svelto-web's): a
//! page's request, already located (`uri.rs`: `REPO/!svn/web/PAGE/REV/path`), admitted and
//! checked as a `GET` of its path (`resource::handle`), is handed to svelto-web with the
//! request's service context; the parent path's `GET` lists the repositories the visitor
//! may read.

use crate::error::HttpError;
use crate::uri::{Located, Target};
use crate::{Reply, Req, State};
use bytes::Bytes;
use hyper::{Method, StatusCode};
use svelto_core::Revnum;

/// Now, in microseconds since 1970, as the repository's `Env` tells it (pages say how
/// old a change is).
fn now_micros(svc: &svelto_repos::service::Ctx) -> i64 {
    svelto_core::parse_svn_date(&svc.env().svn_date()).unwrap_or(0)
}

fn reply(r: svelto_web::Response) -> Reply {
    let status = StatusCode::from_u16(r.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut reply = Reply::new(status, r.content_type, r.body);
    for (name, value) in r.headers {
        reply = reply.header(name, Bytes::from(value));
    }
    reply
}

/// A page of the interface.
pub(crate) fn page(
    state: &State,
    svc: &svelto_repos::service::Ctx,
    target: &Target,
    page: svelto_web::Page,
    rev: Option<Revnum>,
    req: &Req,
) -> Result<Reply, HttpError> {
    let site = svelto_web::Site {
        prefix: &state.config.prefix,
        root_href: &target.root_href,
        repo_name: &target.repo_name,
        now_micros: now_micros(svc),
    };
    let request = svelto_web::Request {
        page,
        rev,
        path: &target.path,
        query: req.query.as_deref(),
    };
    if page == svelto_web::Page::Archive {
        // Written as the connection takes it, a file's text at a time.
        return Ok(match svelto_web::archive(svc, &site, &request)? {
            Ok(archive) => {
                let disposition = format!("attachment; filename=\"{}\"", archive.file_name());
                Reply::stream(
                    StatusCode::OK,
                    archive.format.content_type(),
                    Box::new(move |out| archive.write(out).map_err(HttpError::from)),
                )
                .header("content-disposition", Bytes::from(disposition))
                .header("x-content-type-options", Bytes::from_static(b"nosniff"))
            }
            Err(page) => reply(page),
        });
    }
    Ok(reply(svelto_web::render(svc, &site, &request)?))
}

/// The repositories right under the root that the request's visitor may read (with the
/// same admission and URL check a `GET` of each repository's root gets), as a page.
pub(crate) fn repository_list(state: &State, req: &Req) -> Reply {
    let prefix = &state.config.prefix;
    let mut names: Vec<String> = std::fs::read_dir(&state.host.config.root)
        .map(|dir| {
            dir.filter_map(|e| e.ok())
                .filter(|e| state.host.repos.is_repo(&e.path()))
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names.retain(|name| {
        readable(
            state,
            req,
            &format!("{prefix}/{}", crate::uri::encode(name)),
        )
    });
    reply(svelto_web::repository_list(prefix, &names))
}

/// Whether the request's visitor may `GET` the repository root at `path`.
fn readable(state: &State, req: &Req, path: &str) -> bool {
    let Ok(Located::Repo(target)) = crate::uri::locate(state, path) else {
        return false;
    };
    let Ok(opened) = state.host.repos.open(&target.repo_dir) else {
        return false;
    };
    match crate::access::admit(state, &target, opened, req) {
        Ok((svc, gate)) => crate::access::check_url(&svc, &gate, &Method::GET, &target).is_ok(),
        Err(_) => false,
    }
}
