//! svnadmin's subcommands as a library, over both backends of the seam: the same dump
//! loaded into the local engine and into memory gives the same `verify` output (whole,
//! quiet, a range, keep-going over damage) and the same revision property changes and
//! refusals; what a backend has no meaning for is refused in words that say so. The
//! binary's suite, crates/svelto-cli/tests/admin, compares the output with svnadmin's.

use std::any::Any;
use std::io::Read;
use std::sync::Arc;
use svelto_admin::verify::{verify, VerifyOptions};
use svelto_admin::AdminError;
use svelto_core::{Env, PropList, Revnum};
use svelto_fs::{
    Corruption, DirEntry, FileText, ListingId, LockTable, NodeRev, NodeRevId, PropsId, ReadRepo,
    Result, RevInfo, RevMeta, StoreError, TextId, WriteRepo,
};
use svelto_repos::{Hooks, ReposError};
use svelto_testkit::memfs::{Backend, TestRepo, BACKENDS};

fn loaded(backend: Backend, scenario: &str) -> TestRepo {
    let t = TestRepo::create(
        backend,
        "00000000-0000-4000-8000-000000000009",
        "2026-03-01T00:00:00.000000Z",
    );
    let dump = std::fs::read(svelto_testkit::scenario_dump(scenario)).expect("fixture");
    let mut w = t.writer();
    svelto_repos::load(&mut *w, &dump[..], Default::default(), &mut |_| {})
        .unwrap_or_else(|e| panic!("{backend:?}: load {scenario}: {e}"));
    drop(w);
    t.repo.refresh().expect("refresh");
    t
}

/// An error's lines as a caller prints them (the binary adds Subversion's codes).
fn lines(e: &ReposError) -> Vec<(u32, String)> {
    vec![(1, e.to_string())]
}

/// What `verify` returned and wrote to standard output and standard error, and the
/// revisions it said were done.
type Verified = (
    std::result::Result<bool, String>,
    String,
    String,
    Vec<Revnum>,
);

fn run_verify(repo: &dyn ReadRepo, opts: &VerifyOptions) -> Verified {
    let (mut out, mut err, mut done) = (Vec::new(), Vec::new(), Vec::new());
    let result = verify(
        repo,
        opts,
        &mut out,
        &mut err,
        &mut |r| done.push(r),
        &lines,
    )
    .map_err(|e| e.to_string());
    let text = |b: Vec<u8>| String::from_utf8(b).expect("UTF-8 output");
    (result, text(out), text(err), done)
}

#[test]
fn verify_says_the_same_over_both_backends() {
    for scenario in ["basic", "copies", "props", "mergeinfo", "replace"] {
        let repos = BACKENDS.map(|b| loaded(b, scenario));
        let youngest = repos[0].repo.youngest();
        let whole = VerifyOptions {
            start: 0,
            end: youngest,
            check_normalization: true,
            ..VerifyOptions::default()
        };
        let range = VerifyOptions {
            start: 1,
            end: youngest,
            ..VerifyOptions::default()
        };
        let quiet = VerifyOptions {
            quiet: true,
            ..whole.clone()
        };
        let metadata = VerifyOptions {
            metadata_only: true,
            ..whole.clone()
        };
        for opts in [&whole, &range, &quiet, &metadata] {
            let [local, mem] = [&repos[0], &repos[1]].map(|t| run_verify(&*t.repo, opts));
            assert_eq!(mem, local, "{scenario}: {opts:?}");
        }
        // svnadmin's lines (the binary's suite compares them with svnadmin itself).
        let (result, out, err, done) = run_verify(&*repos[1].repo, &whole);
        assert_eq!(result, Ok(true), "{scenario}");
        assert_eq!(err, "", "{scenario}");
        let mut expected = String::from(
            "* Verifying metadata at revision 0 ...\n* Verifying repository metadata ...\n",
        );
        for rev in 0..=youngest {
            expected.push_str(&format!("* Verified revision {rev}.\n"));
        }
        assert_eq!(out, expected, "{scenario}");
        assert_eq!(done, (0..=youngest).collect::<Vec<_>>(), "{scenario}");
        let (result, out, err, _) = run_verify(&*repos[1].repo, &quiet);
        assert_eq!((result, out, err), (Ok(true), String::new(), String::new()));
        let (_, out, _, done) = run_verify(&*repos[1].repo, &metadata);
        assert!(!out.contains("Verified revision"), "{scenario}: {out}");
        assert!(done.is_empty(), "{scenario}: {done:?}");
    }
}

/// A backend's handle whose revision `bad` cannot be read: the damage a verification
/// reports, the same over whichever backend is under it.
struct Damaged {
    inner: Arc<dyn ReadRepo>,
    bad: Revnum,
}

impl ReadRepo for Damaged {
    fn youngest(&self) -> Revnum {
        self.inner.youngest()
    }
    fn refresh(&self) -> Result<Revnum> {
        self.inner.refresh()
    }
    fn uuid(&self) -> Result<String> {
        self.inner.uuid()
    }
    fn env(&self) -> Arc<dyn Env> {
        self.inner.env()
    }
    fn rev_info(&self, rev: Revnum) -> Result<RevInfo> {
        if rev == self.bad {
            return Err(StoreError::Corrupt {
                file: "revisions",
                offset: rev,
                what: Corruption::new("damaged on purpose"),
            });
        }
        self.inner.rev_info(rev)
    }
    fn rev_meta(&self, rev: Revnum) -> Result<Arc<RevMeta>> {
        self.inner.rev_meta(rev)
    }
    fn node(&self, id: NodeRevId) -> Result<Arc<NodeRev>> {
        self.inner.node(id)
    }
    fn listing(&self, id: ListingId) -> Result<Arc<Vec<DirEntry>>> {
        self.inner.listing(id)
    }
    fn props_shared(&self, id: PropsId) -> Result<Arc<PropList>> {
        self.inner.props_shared(id)
    }
    fn text(&self, id: TextId) -> Result<Arc<Vec<u8>>> {
        self.inner.text(id)
    }
    fn text_reader(&self, text: &FileText) -> Result<Box<dyn Read + Send>> {
        self.inner.text_reader(text)
    }
    fn locks(&self) -> Result<Arc<LockTable>> {
        self.inner.locks()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[test]
fn verify_keeps_going_past_damage_alike_over_both_backends() {
    let repos = BACKENDS.map(|b| loaded(b, "basic"));
    let youngest = repos[0].repo.youngest();
    assert!(youngest >= 2, "basic has {youngest} revisions");
    let damaged = repos.each_ref().map(|t| Damaged {
        inner: t.repo.clone(),
        bad: 1,
    });
    let going = VerifyOptions {
        start: 0,
        end: youngest,
        keep_going: true,
        ..VerifyOptions::default()
    };
    let stopping = VerifyOptions {
        keep_going: false,
        ..going.clone()
    };
    for opts in [&going, &stopping] {
        let [local, mem] = damaged.each_ref().map(|d| run_verify(d, opts));
        assert_eq!(mem, local, "{opts:?}");
    }
    let (result, out, err, done) = run_verify(&damaged[1], &going);
    assert_eq!(result, Ok(false));
    let what = "revision 1: repository corrupt: revisions at offset 1: damaged on purpose";
    assert_eq!(
        err,
        format!("* Error verifying revision 1.\nsvnadmin: E000001: {what}\n")
    );
    assert!(
        out.contains("* Verified revision 0.\n* Verified revision 2.\n"),
        "{out}"
    );
    assert!(
        out.ends_with(&format!(
            "\n-----Summary of corrupt revisions-----\n    r1: E000001: {what}\n"
        )),
        "{out}"
    );
    assert_eq!(done, (0..=youngest).collect::<Vec<_>>());
    // Without --keep-going, the first damage ends the run.
    let (result, out, err, done) = run_verify(&damaged[1], &stopping);
    assert_eq!(result, Err(what.to_string()));
    assert!(out.ends_with("* Verified revision 0.\n"), "{out}");
    assert_eq!(err, "* Error verifying revision 1.\n");
    assert_eq!(done, vec![0]);
}

/// What a writer runs.
type Body<'a> = &'a mut dyn FnMut(&mut dyn WriteRepo) -> svelto_repos::Result<()>;

/// Runs a revision property change on `t`, its writer taken as the binary takes it.
fn change(
    t: &TestRepo,
    hooks: &Hooks,
    rev: Revnum,
    name: &str,
    value: Option<&[u8]>,
    use_hooks: svelto_repos::revprops::HookUse,
) -> std::result::Result<(), String> {
    let with_writer: svelto_admin::revprops::WithWriter<'_> = Box::new(|f: Body<'_>| {
        let mut w: Box<dyn WriteRepo> = t.writer();
        f(&mut *w)
    });
    svelto_admin::revprops::change(&*t.repo, hooks, rev, name, value, use_hooks, with_writer)
        .map_err(|e| e.to_string())
}

#[test]
fn revision_property_changes_are_the_same_over_both_backends() {
    use svelto_repos::revprops::HookUse;
    let repos = BACKENDS.map(|b| loaded(b, "basic"));
    let youngest = repos[0].repo.youngest();
    let mut seen = Vec::new();
    for t in &repos {
        // A local repository's hooks are its hooks/ (templates only); memory has none.
        let hooks = match t.path() {
            Some(dir) => Hooks::new(dir, None).expect("hooks"),
            None => Hooks::none(),
        };
        let setlog = |message: &[u8], bypass: bool| {
            let with_writer: svelto_admin::revprops::WithWriter<'_> = Box::new(|f: Body<'_>| {
                let mut w = t.writer();
                f(&mut *w)
            });
            svelto_admin::revprops::setlog(&*t.repo, &hooks, 1, message, bypass, with_writer)
                .map_err(|e| e.to_string())
        };
        let answers = vec![
            setlog(b"new message\n", true),
            // Without a pre-revprop-change hook nothing may change.
            setlog(b"refused\n", false),
            change(t, &hooks, 1, "custom", Some(b"v"), HookUse::NONE),
            change(t, &hooks, 2, "custom", Some(b"w"), HookUse::NONE),
            change(t, &hooks, 2, "custom", None, HookUse::NONE),
            change(t, &hooks, youngest + 1, "custom", Some(b"x"), HookUse::NONE),
            change(t, &hooks, 1, "svn:log", Some(b"a\r\nb"), HookUse::NONE),
            change(t, &hooks, 1, "svn:date", Some(b"yesterday"), HookUse::NONE),
            change(t, &hooks, 1, "svn:entry:x", Some(b"y"), HookUse::NONE),
        ];
        let props: Vec<PropList> = (0..=youngest)
            .map(|r| t.repo.revprops(r).expect("revprops"))
            .collect();
        seen.push((answers, props));
    }
    assert_eq!(seen[1], seen[0]);
    let (answers, props) = &seen[1];
    assert_eq!(answers[0], Ok(()));
    assert!(answers[1].is_err(), "{:?}", answers[1]);
    assert_eq!(answers[2..5], [Ok(()), Ok(()), Ok(())]);
    assert_eq!(
        answers[5],
        Err(format!("No such revision {}", youngest + 1))
    );
    assert!(answers[6..].iter().all(|a| a.is_err()), "{answers:?}");
    assert_eq!(
        props[1].get(&b"svn:log"[..]),
        Some(&b"new message\n".to_vec())
    );
    assert_eq!(props[1].get(&b"custom"[..]), Some(&b"v".to_vec()));
    assert_eq!(props[2].get(&b"custom"[..]), None);
}

#[test]
fn what_a_backend_cannot_do_is_refused_in_words() {
    let [local, mem] = BACKENDS.map(|b| loaded(b, "basic"));
    let mut out = Vec::new();
    // No transaction is running on either.
    for t in [&local, &mem] {
        svelto_admin::maintenance::lstxns(&*t.repo, None, &mut out).expect("lstxns");
    }
    assert!(out.is_empty());
    svelto_admin::maintenance::rev_size(&*local.repo, 1, true, &mut out).expect("rev-size");
    let size: u64 = String::from_utf8(out)
        .expect("UTF-8")
        .trim()
        .parse()
        .expect("a number");
    assert!(size > 0);
    let e = svelto_admin::maintenance::rev_size(&*mem.repo, 1, true, &mut Vec::new())
        .expect_err("memory keeps no stored sizes");
    assert!(matches!(
        e,
        AdminError::Repos(ReposError::Store(StoreError::Unsupported(_)))
    ));
    assert_eq!(
        e.to_string(),
        "not supported by this storage backend: the stored size of revision 1"
    );
    // Every revision is read by build-repcache and deltify, on either backend.
    for t in [&local, &mem] {
        let mut out = Vec::new();
        svelto_admin::maintenance::deltify(&*t.repo, 1, 2, false, &mut out).expect("deltify");
        assert_eq!(
            out,
            b"Deltifying revision 1...done.\nDeltifying revision 2...done.\n"
        );
    }
}
