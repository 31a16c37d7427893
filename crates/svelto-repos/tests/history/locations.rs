//! get_locations, location_segments and deleted_rev against svnserve's get-locations,
//! get-location-segments and get-deleted-rev on the same history.

use crate::{changed_locations, wire_error, Pair, SCENARIOS};
use svelto_core::Revnum;
use svelto_repos::{deleted_rev, get_locations, location_segments, Segment};
use svelto_testkit::svnserve_client::{Mode, SvnserveClient as Svnserve};
use svelto_testkit::Run;
use svelto_wire::Item;

fn rev_item(r: Revnum) -> Item {
    Item::Number(r)
}

fn opt_rev(r: Revnum) -> Item {
    Item::list(vec![Item::Number(r)])
}

/// svnserve's get-locations answer as sorted (rev, fspath).
fn theirs_locations(
    s: &mut Svnserve,
    path: &str,
    peg: Revnum,
    revs: &[Revnum],
) -> Result<Vec<(Revnum, String)>, (u64, String)> {
    let a = s.stream(
        "get-locations",
        vec![
            Item::string(path),
            rev_item(peg),
            Item::list(revs.iter().map(|r| rev_item(*r)).collect::<Vec<_>>()),
        ],
    );
    a.response?;
    let mut out: Vec<(Revnum, String)> = a
        .items
        .iter()
        .map(|i| {
            let l = i.as_list().expect("( rev path )");
            (
                l[0].as_number().expect("rev"),
                String::from_utf8(l[1].as_string().expect("path").to_vec()).expect("utf-8"),
            )
        })
        .collect();
    out.sort();
    Ok(out)
}

fn theirs_segments(
    s: &mut Svnserve,
    path: &str,
    peg: Revnum,
    start: Revnum,
    end: Revnum,
) -> Result<Vec<Segment>, (u64, String)> {
    let a = s.stream(
        "get-location-segments",
        vec![
            Item::string(path),
            opt_rev(peg),
            opt_rev(start),
            opt_rev(end),
        ],
    );
    a.response?;
    Ok(a.items
        .iter()
        .map(|i| {
            let l = i.as_list().expect("segment");
            let p = l[2].as_list().expect("( path? )");
            Segment {
                start: l[0].as_number().expect("start"),
                end: l[1].as_number().expect("end"),
                path: p
                    .first()
                    .map(|x| format!("/{}", String::from_utf8_lossy(x.as_string().expect("path")))),
            }
        })
        .collect())
}

fn theirs_deleted(
    s: &mut Svnserve,
    path: &str,
    peg: Revnum,
    end: Revnum,
) -> Result<Option<Revnum>, (u64, String)> {
    match s.call(
        "get-deleted-rev",
        vec![Item::string(path), rev_item(peg), rev_item(end)],
    ) {
        Ok(v) => Ok(Some(v[0].as_number().expect("rev"))),
        Err((150003, _)) => Ok(None),
        Err(e) => Err(e),
    }
}

fn ours_segments(
    pair: &Pair,
    path: &str,
    peg: Revnum,
    start: Revnum,
    end: Revnum,
) -> Result<Vec<Segment>, (u64, String)> {
    let mut out = Vec::new();
    location_segments(&pair.repo, path, peg, start, end, &mut |s| {
        out.push(s);
        Ok(())
    })
    .map_err(|e| wire_error(&e))?;
    Ok(out)
}

/// Compares every query for `path` with peg `peg`; returns how many comparisons it made.
fn compare_path(pair: &Pair, s: &mut Svnserve, path: &str, peg: Revnum) -> usize {
    let head = pair.youngest();
    let all: Vec<Revnum> = (0..=head).collect();
    let ctx = format!("{}: '{path}'@{peg}", pair.name);

    let mut ours = get_locations(&pair.repo, path, peg, &all).map_err(|e| wire_error(&e));
    if let Ok(v) = &mut ours {
        v.sort();
    }
    assert_eq!(
        ours,
        theirs_locations(s, path, peg, &all),
        "{ctx}: get-locations"
    );
    // Only revisions before the peg (no younger ones to check for ancestry).
    let older: Vec<Revnum> = (0..=peg).rev().step_by(2).collect();
    let mut ours = get_locations(&pair.repo, path, peg, &older).map_err(|e| wire_error(&e));
    if let Ok(v) = &mut ours {
        v.sort();
    }
    assert_eq!(
        ours,
        theirs_locations(s, path, peg, &older),
        "{ctx}: get-locations (older)"
    );

    let mut n = 2;
    let ranges = [
        (peg, 0),
        (peg, peg / 2),
        (peg.saturating_sub(1), 1),
        (peg, peg),
    ];
    for (start, end) in ranges {
        if end > start {
            continue;
        }
        assert_eq!(
            ours_segments(pair, path, peg, start, end),
            theirs_segments(s, path, peg, start, end),
            "{ctx}: get-location-segments {start}:{end}"
        );
        n += 1;
    }
    for end in [head, peg + 1, peg.saturating_sub(1), 0] {
        if end > head {
            continue;
        }
        let ours = deleted_rev(&pair.repo, path, peg, end).map_err(|e| wire_error(&e));
        assert_eq!(
            ours,
            theirs_deleted(s, path, peg, end),
            "{ctx}: get-deleted-rev to {end}"
        );
        n += 1;
    }
    n
}

#[test]
fn locations_segments_and_deletions_match_svnserve() {
    let mut total = 0;
    for name in SCENARIOS {
        let pair = Pair::scenario(name);
        let mut s = pair.svnserve(Mode::Tunnel);
        let head = pair.youngest();
        let mut pegs: std::collections::BTreeSet<(String, Revnum)> = changed_locations(&pair.repo);
        // The same paths seen from HEAD and from the revision after each change.
        for (p, r) in pegs.clone() {
            pegs.insert((p.clone(), head));
            pegs.insert((p, (r + 1).min(head)));
        }
        pegs.insert((String::new(), head));
        for (path, peg) in &pegs {
            total += compare_path(&pair, &mut s, path, *peg);
        }
        // Errors: a path missing at the peg, a peg past HEAD, bad ranges.
        for (path, peg) in [("no/such", head), ("", head + 1)] {
            total += compare_path(&pair, &mut s, path, peg);
        }
        assert_eq!(
            ours_segments(&pair, "", head, 0, 1),
            theirs_segments(&mut s, "", head, 0, 1)
        );
    }
    assert!(total > 1000, "only {total} comparisons");
}

/// `svn cat`/`svn info` of `URL@peg -r N` finds the path get_locations names, and fails
/// exactly where get_locations has no location.
#[test]
fn locations_agree_with_the_client_resolving_peg_revisions() {
    for name in ["moves", "copies", "replace"] {
        let pair = Pair::scenario(name);
        let url = pair.fsfs.url();
        let head = pair.youngest();
        let mut seen = 0;
        for (path, peg) in changed_locations(&pair.repo) {
            if peg != head && !path.ends_with(".txt") && seen > 20 {
                continue;
            }
            seen += 1;
            for rev in (1..=head).step_by(3) {
                let out = Run::tool("svn")
                    .args(["info", "--xml", "--non-interactive", "-r"])
                    .arg(rev.to_string())
                    .arg(format!("{url}/{path}@{peg}"))
                    .output();
                let ours = get_locations(&pair.repo, &path, peg, &[rev]).unwrap_or_default();
                let expected = ours.first();
                match expected {
                    Some((_, p)) => {
                        assert!(out.success(), "{name}: {path}@{peg} -r {rev}: {out}");
                        let text = out.stdout_text();
                        let rel =
                            format!("<relative-url>^{}</relative-url>", xml_escape(&uri_path(p)));
                        assert!(
                            text.contains(&rel),
                            "{name}: {path}@{peg} -r {rev}: want {rel} in {text}"
                        );
                    }
                    None => assert!(
                        !out.success(),
                        "{name}: {path}@{peg} -r {rev} succeeded: {out}"
                    ),
                }
            }
        }
    }
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// How the client writes a repository path in a URL.
fn uri_path(p: &str) -> String {
    let mut out = String::new();
    for b in p.bytes() {
        if b.is_ascii_alphanumeric() || b"/-_.~!$&'()*+,;=:@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
