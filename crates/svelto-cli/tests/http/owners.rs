//! A commit transaction belongs to the user who began it: another user who knows (or
//! guesses) its name cannot write into it, as mod_dav_svn refuses it ("Multi-author
//! commits not supported."), and the names cannot be guessed from one another.

use std::collections::BTreeMap;
use std::path::PathBuf;

use svelto_testkit::authz_matrix::{install, repo_name};
use svelto_testkit::Pair;

use crate::{addr_and_path, htpasswd};

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_svelto"))
}

const REALM: &str = "Svelto test realm";

fn basic(user: &str, password: &str) -> String {
    use base64::Engine as _;
    format!(
        "Authorization: Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
    )
}

/// The value of header `name` in a raw response.
fn header(text: &str, name: &str) -> Option<String> {
    text.lines().take_while(|l| !l.is_empty()).find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
    })
}

/// One side's answers to harry's transaction and sally's requests into it, by step.
fn steps(pair: &Pair, side: usize) -> (BTreeMap<&'static str, u16>, Vec<String>) {
    let (addr, repo) = addr_and_path(pair, side);
    let harry = basic("harry", "harryssecret");
    let sally = basic("sally", "sallyssecret");
    let req = |who: Option<&str>, method: &str, path: &str, extra: &[&str], body: &[u8]| {
        let mut headers: Vec<&[u8]> = extra.iter().map(|h| h.as_bytes()).collect();
        if let Some(w) = who {
            headers.push(w.as_bytes());
        }
        crate::raw_request(&addr, method, path, &headers, body)
    };
    let mut got = BTreeMap::new();
    let mut names = Vec::new();
    let me = format!("{repo}/!svn/me");
    // Two transactions of harry's: their names are not one from the other.
    for _ in 0..2 {
        let (status, text) = req(
            Some(&harry),
            "POST",
            &me,
            &["Content-Type: application/vnd.svn-skel"],
            b"( create-txn )",
        );
        assert_eq!(status, 201, "side {side}: {text}");
        names.push(header(&text, "svn-txn-name").expect("SVN-Txn-Name"));
    }
    let txn = names[0].clone();
    let txr = format!("{repo}/!svn/txr/{txn}");
    let text_plain = ["Content-Type: text/plain"];
    got.insert(
        "harry PUT",
        req(
            Some(&harry),
            "PUT",
            &format!("{txr}/by-harry"),
            &text_plain,
            b"harry\n",
        )
        .0,
    );
    got.insert(
        "sally PUT",
        req(
            Some(&sally),
            "PUT",
            &format!("{txr}/by-sally"),
            &text_plain,
            b"sally\n",
        )
        .0,
    );
    got.insert(
        "sally PUT over harry's",
        req(
            Some(&sally),
            "PUT",
            &format!("{txr}/by-harry"),
            &text_plain,
            b"sally\n",
        )
        .0,
    );
    got.insert(
        "sally MKCOL",
        req(
            Some(&sally),
            "MKCOL",
            &format!("{txr}/dir-by-sally"),
            &[],
            b"",
        )
        .0,
    );
    got.insert(
        "sally DELETE",
        req(Some(&sally), "DELETE", &format!("{txr}/trunk"), &[], b"").0,
    );
    let proppatch = b"<?xml version=\"1.0\" encoding=\"utf-8\"?>\
        <D:propertyupdate xmlns:D=\"DAV:\" xmlns:C=\"http://subversion.tigris.org/xmlns/custom/\">\
        <D:set><D:prop><C:by-sally>yes</C:by-sally></D:prop></D:set></D:propertyupdate>";
    got.insert(
        "sally PROPPATCH",
        req(
            Some(&sally),
            "PROPPATCH",
            &format!("{txr}/trunk"),
            &[],
            proppatch,
        )
        .0,
    );
    let copy_to = format!("Destination: http://{addr}{txr}/copy-by-sally");
    got.insert(
        "sally COPY",
        req(
            Some(&sally),
            "COPY",
            &format!("{repo}/!svn/rvr/1/trunk"),
            &[&copy_to, "Depth: infinity"],
            b"",
        )
        .0,
    );
    let merge = format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><D:merge xmlns:D=\"DAV:\"><D:source>\
         <D:href>{repo}/!svn/txn/{txn}</D:href></D:source><D:no-auto-merge/><D:no-checkout/>\
         <D:prop><D:checked-in/><D:version-name/><D:resourcetype/><D:creationdate/>\
         <D:creator-displayname/></D:prop></D:merge>"
    );
    got.insert(
        "harry MERGE",
        req(
            Some(&harry),
            "MERGE",
            &format!("{repo}/"),
            &[],
            merge.as_bytes(),
        )
        .0,
    );
    (got, names)
}

/// harry begins a transaction and writes a file into it; sally, who may write everywhere
/// herself, sends PUT, MKCOL, DELETE, PROPPATCH and COPY into it by its name: each is
/// refused as Apache refuses it (501), and harry's MERGE commits only his file. The
/// transaction names of two POSTs share no guessable sequence.
#[test]
fn another_users_transaction_cannot_be_written_into() {
    let pair = Pair::http_auth("basic", &bin(), true);
    htpasswd(
        &pair.htpasswd(),
        &[
            ("harry", "harryssecret", "-B"),
            ("sally", "sallyssecret", "-B"),
        ],
    );
    install(
        &pair,
        &format!(
            "[general]\nanon-access = read\nauth-access = write\nauthz-db = authz\n\
             realm = {REALM}\n"
        ),
        "[/]\n* = r\nharry = rw\nsally = rw\n",
    );
    let name = repo_name(&pair);
    assert!(!name.is_empty());
    let (apache, _) = steps(&pair, 0);
    let (svelto, names) = steps(&pair, 1);
    assert_eq!(apache["sally PUT"], 501, "Apache: {apache:?}");
    assert_eq!(svelto, apache, "Svelto's statuses against Apache's");
    // What harry committed: his file alone, by him.
    for (side, url) in [(0, pair.reference_url()), (1, pair.subject_url())] {
        let out = pair
            .client()
            .svn(&["log", "-v", "-l", "1", &url], pair.dir());
        let log = out.stdout_text();
        assert!(log.contains("| harry |"), "side {side}: {log}");
        assert!(log.contains("A /by-harry"), "side {side}: {log}");
        assert!(!log.contains("sally"), "side {side}: {log}");
        let out = pair.client().svn(&["ls", &url], pair.dir());
        assert!(!out.stdout_text().contains("by-sally"), "{out}");
        assert!(!out.stdout_text().contains("copy-by-sally"), "{out}");
    }
    // Names are not a sequence: the parts after the base revision differ in more than a
    // counter's last digits, and carry at least 12 random base-36 digits.
    let tails: Vec<&str> = names
        .iter()
        .map(|n| n.split_once('-').expect("REV-NAME").1)
        .collect();
    assert!(tails.iter().all(|t| t.len() >= 12), "{names:?}");
    let common = tails[0]
        .bytes()
        .zip(tails[1].bytes())
        .filter(|(a, b)| a == b)
        .count();
    assert!(common < tails[0].len() - 6, "{names:?}");
}
