//! The web interface (docs/web.md) in a real browser: `svelto serve --http-listen` serving a
//! repository made here with the stock `svnmucc`, and Debian's headless Chromium loading
//! its pages (`--dump-dom` for the DOM after the page ran, `--screenshot` for the pictures
//! kept under `target/tmp/web-screenshots/`). A visitor goes from the parent path to a
//! file's line range, its history, a revision, a diff and a blame, and searches, following
//! the links of the DOM Chromium built; committed HTML, SVG and JavaScript files, a hostile
//! file name and a hostile log message run nothing (no title change, no request to a
//! listening socket); an anonymous visitor never sees a path authz hides. Fails, saying
//! what to install, when Chromium or Subversion's tools are missing.

use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::Duration;
use svelto_testkit::{require_tool, Run, Svelto};

/// Debian's Chromium, or a loud failure.
fn chromium() -> PathBuf {
    for name in ["chromium", "chromium-browser"] {
        if let Some(p) = std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join(name))
                .find(|c| c.is_file())
        }) {
            return p;
        }
    }
    panic!("\n\n*** Chromium is required for the web interface's tests: apt-get install chromium chromium-driver ***\n");
}

/// A headless Chromium run on `url`, with a profile of its own; `what` its mode flags.
fn browse(profile: &Path, what: &[&str], url: &str) -> String {
    let out = Run::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--disable-background-networking",
            "--virtual-time-budget=1500",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(what)
        .arg(url)
        .timeout(Duration::from_secs(60))
        .success();
    out.stdout_text()
}

/// The DOM of `url` after the page ran.
fn dom(profile: &Path, url: &str) -> String {
    browse(profile, &["--dump-dom"], url)
}

/// A screenshot of `url`, kept as a test artefact.
fn screenshot(profile: &Path, url: &str, name: &str) {
    screenshot_sized(profile, url, name, "1100,800");
}

/// A screenshot of `url` in a window of `size` ("W,H").
fn screenshot_sized(profile: &Path, url: &str, name: &str, size: &str) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("web-screenshots");
    std::fs::create_dir_all(&dir).expect("screenshot directory");
    let file = dir.join(format!("{name}.png"));
    browse(
        profile,
        &[
            &format!("--screenshot={}", file.display()),
            &format!("--window-size={size}"),
            "--hide-scrollbars",
        ],
        url,
    );
    assert!(file.is_file(), "no screenshot of {url} at {file:?}");
}

/// The `href` of the first `<a>` whose text is `text` (HTML entities as Chromium writes them).
fn link(dom: &str, text: &str) -> String {
    let mut rest = dom;
    while let Some(i) = rest.find("<a ") {
        rest = &rest[i..];
        let end = rest.find("</a>").expect("a closed <a>");
        let anchor = &rest[..end];
        let gt = anchor.find('>').expect("an <a> tag");
        if anchor[gt + 1..].trim() == text {
            let h = anchor.find("href=\"").expect("an href") + 6;
            let href = &anchor[h..];
            return href[..href.find('"').expect("a closed href")].replace("&amp;", "&");
        }
        rest = &rest[end..];
    }
    panic!("no link {text:?} in:\n{dom}");
}

/// The page's `<title>`.
fn title(dom: &str) -> &str {
    let s = dom.find("<title>").map_or(0, |i| i + 7);
    let e = dom.find("</title>").unwrap_or(s);
    &dom[s..e]
}

struct Rig {
    _dir: tempfile::TempDir,
    server: Svelto,
    profile: PathBuf,
    root: PathBuf,
    /// A socket a script that ran would reach.
    beacon: TcpListener,
}

impl Rig {
    fn url(&self, rel: &str) -> String {
        format!("{}{rel}", self.server.base_url())
    }

    fn dom(&self, rel: &str) -> String {
        let d = dom(&self.profile, &self.url(rel));
        assert_ne!(title(&d), "pwned", "a script ran on {rel}");
        d
    }

    /// Whether any script reached the beacon.
    fn beacon_hit(&self) -> bool {
        self.beacon.set_nonblocking(true).expect("nonblocking");
        match self.beacon.accept() {
            Ok((mut s, _)) => {
                let mut buf = [0u8; 512];
                let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
                let n = s.read(&mut buf).unwrap_or(0);
                eprintln!("beacon: {}", String::from_utf8_lossy(&buf[..n]));
                true
            }
            Err(_) => false,
        }
    }
}

/// A repository `demo` with three revisions: files and a hidden directory, a change to
/// both, hostile files, name and message; served over HTTP, its authz then hiding
/// `/secret` from everyone.
fn rig() -> Rig {
    require_tool("svnmucc");
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("root");
    let svelto = Path::new(env!("CARGO_BIN_EXE_svelto"));
    Run::new(svelto)
        .args(["admin", "create"])
        .arg(root.join("demo"))
        .success();
    let conf = root.join("demo/conf");
    std::fs::write(
        conf.join("svnserve.conf"),
        "[general]\nanon-access = write\n",
    )
    .expect("svnserve.conf");
    let server = Svelto::start_http(svelto, &root, &dir.path().join("serve.log"), "", &[]);
    let beacon = TcpListener::bind("127.0.0.1:0").expect("beacon");
    let port = beacon.local_addr().expect("addr").port();
    let files = dir.path().join("files");
    std::fs::create_dir_all(&files).expect("files");
    let put = |name: &str, text: &str| {
        let p = files.join(name);
        std::fs::write(&p, text).expect("file");
        p
    };
    let repo = format!("{}/demo", server.base_url());
    let mucc = |msg: &str, ops: Vec<String>| {
        Run::tool("svnmucc")
            .args(["--non-interactive", "-m", msg])
            .args(ops)
            .success();
    };
    let readme = put(
        "README.md",
        "# Demo project\n\nRead <script>document.title='pwned'</script> me.\n",
    );
    let main1 = put("main.rs", "fn main() {\n    println!(\"hi\");\n}\n");
    let plan1 = put("plan1.txt", "the secret plan\n");
    mucc(
        "initial import",
        vec![
            "mkdir".into(),
            format!("{repo}/trunk"),
            "mkdir".into(),
            format!("{repo}/secret"),
            "put".into(),
            readme.display().to_string(),
            format!("{repo}/trunk/README.md"),
            "put".into(),
            main1.display().to_string(),
            format!("{repo}/trunk/main.rs"),
            "put".into(),
            plan1.display().to_string(),
            format!("{repo}/secret/plan.txt"),
        ],
    );
    let main2 = put(
        "main2.rs",
        "fn main() {\n    println!(\"hello, world\");\n}\n// the end\n",
    );
    let plan2 = put("plan2.txt", "the secret plan, revised\n");
    mucc(
        "tweak main and the plan",
        vec![
            "put".into(),
            main2.display().to_string(),
            format!("{repo}/trunk/main.rs"),
            "put".into(),
            plan2.display().to_string(),
            format!("{repo}/secret/plan.txt"),
        ],
    );
    let script = format!(
        "<script>document.title='pwned';fetch('http://127.0.0.1:{port}/script')</script>\
         <img src=\"http://127.0.0.1:{port}/img\">"
    );
    let html = put(
        "evil.html",
        &format!("<html><body>{script}</body></html>\n"),
    );
    let svg = put(
        "evil.svg",
        &format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"document.title='pwned'\">\
             <script>fetch('http://127.0.0.1:{port}/svg')</script></svg>\n"
        ),
    );
    let js = put("evil.js", "document.title='pwned';\n");
    let named = put("named.txt", "a file with a hostile name\n");
    mucc(
        &format!("hostile <b>message</b> {script}"),
        vec![
            "put".into(),
            html.display().to_string(),
            format!("{repo}/trunk/evil.html"),
            "put".into(),
            svg.display().to_string(),
            format!("{repo}/trunk/evil.svg"),
            "put".into(),
            js.display().to_string(),
            format!("{repo}/trunk/evil.js"),
            "put".into(),
            named.display().to_string(),
            format!(
                "{repo}/trunk/{}",
                svelto_web::encode_path("<svg onload=\"document.title='pwned'\">.txt")
            ),
        ],
    );
    // From now on nobody reads /secret.
    std::fs::write(
        conf.join("svnserve.conf"),
        "[general]\nanon-access = read\nauthz-db = authz\n",
    )
    .expect("svnserve.conf");
    std::fs::write(conf.join("authz"), "[/]\n* = r\n\n[/secret]\n* =\n").expect("authz");
    // Connections re-read the configuration after a second.
    std::thread::sleep(Duration::from_millis(1100));
    let profile = dir.path().join("chromium-profile");
    Rig {
        _dir: dir,
        server,
        profile,
        root,
        beacon,
    }
}

#[test]
fn a_visitor_browses_reads_history_diff_blame_and_searches_and_nothing_hostile_runs() {
    let rig = rig();
    assert!(rig.root.join("demo").is_dir());
    // The parent path lists the repository.
    let home = rig.dom("/");
    assert_eq!(title(&home), "Repositories");
    screenshot(&rig.profile, &rig.url("/"), "repositories");
    // Into the repository, trunk, a file.
    let repo = rig.dom(&link(&home, "demo"));
    assert!(!repo.contains("secret"), "authz hides /secret:\n{repo}");
    let trunk_href = link(&repo, "trunk/");
    let trunk = rig.dom(&trunk_href);
    screenshot(&rig.profile, &rig.url(&trunk_href), "directory");
    // The README rendered, its raw HTML as text; the hostile name and message escaped.
    assert!(trunk.contains("<h1>Demo project</h1>"), "{trunk}");
    assert!(trunk.contains("&lt;script&gt;"), "{trunk}");
    assert!(
        trunk.contains("hostile &lt;b&gt;message&lt;/b&gt;"),
        "{trunk}"
    );
    // The keyboard: a skip link is the first link, to the main part; access keys for the
    // search (S), History (H), and on a file Raw (R), Blame (B), Diff (D); the focus is
    // outlined (the stylesheet's :focus-visible). A phone: the viewport is the device's.
    let body = &trunk[trunk.find("<body>").expect("a body")..];
    assert!(
        body.find("<a ") == body.find("<a class=\"skip\" href=\"#main\">Skip to content</a>"),
        "{trunk}"
    );
    assert!(
        trunk.contains("<main id=\"main\" tabindex=\"-1\">"),
        "{trunk}"
    );
    assert!(trunk.contains("accesskey=\"s\"") && trunk.contains("accesskey=\"h\""));
    assert!(trunk.contains(":focus-visible{outline"), "{trunk}");
    assert!(
        trunk.contains("name=\"viewport\" content=\"width=device-width, initial-scale=1\""),
        "{trunk}"
    );
    screenshot_sized(
        &rig.profile,
        &rig.url(&trunk_href),
        "phone-directory",
        "390,844",
    );
    // Archives of the directory, both kinds.
    assert!(link(&trunk, "Download .zip").ends_with("/!svn/web/archive/3/trunk?format=zip"));
    assert!(link(&trunk, "Download .tar.gz").ends_with("/!svn/web/archive/3/trunk"));
    // r1 and r2 also changed /secret: as `svn log` shows them, their messages are hidden.
    assert!(!trunk.contains("tweak main and the plan"), "{trunk}");
    let file_href = link(&trunk, "main.rs");
    let file = rig.dom(&file_href);
    assert!(file.contains("hello, world"), "{file}");
    // Highlighted (syntect's Rust grammar), as classes the inline stylesheet colours.
    assert!(file.contains("<span class=\"ht\">fn</span>"), "{file}");
    assert!(
        file.contains("<span class=\"hs\">\"hello, world\"</span>"),
        "{file}"
    );
    assert!(file.contains(">Rust<"), "{file}");
    for key in ["r", "b", "d", "h"] {
        assert!(
            file.contains(&format!("accesskey=\"{key}\"")),
            "{key}: {file}"
        );
    }
    screenshot_sized(&rig.profile, &rig.url(&file_href), "phone-file", "390,844");
    // A line's link marks it; a range is `?hl=A-B`.
    let line2 = link(&file, "2");
    assert!(line2.ends_with("?hl=2#L2"), "{line2}");
    let range_url = format!("{file_href}?hl=2-3#L2");
    let range = rig.dom(&range_url);
    assert!(range.contains("<tr id=\"L2\" class=\"hl\">"), "{range}");
    assert!(range.contains("<tr id=\"L3\" class=\"hl\">"));
    assert!(range.contains("<tr id=\"L1\">") && range.contains("<tr id=\"L4\">"));
    screenshot(&rig.profile, &rig.url(&range_url), "file-range");
    // Its history: r2 and r1, with their changed paths, none under /secret.
    let history_href = link(&file, "History");
    let history = rig.dom(&history_href);
    assert!(
        history.contains(">r2<") && history.contains(">r1<"),
        "{history}"
    );
    let entries = &history[history.find("<main").expect("a main")..];
    assert!(!entries.contains(">r3<"), "{history}");
    assert!(history.contains("/trunk/main.rs"));
    assert!(!history.contains("secret"), "{history}");
    screenshot(&rig.profile, &rig.url(&history_href), "history");
    // A revision: its message, changed paths and diff, /secret left out.
    let rev_href = link(&history, "r2");
    let rev = rig.dom(&rev_href);
    assert!(!rev.contains("tweak main and the plan"), "{rev}");
    assert!(
        rev.contains("<ins>hello, world</ins>") || rev.contains("hello, world"),
        "{rev}"
    );
    assert!(!rev.contains("secret"), "{rev}");
    screenshot(&rig.profile, &rig.url(&rev_href), "revision");
    // The diff of the file, unified and side by side.
    let diff_href = link(&file, "Diff with previous");
    let diff = rig.dom(&diff_href);
    assert!(diff.contains("@@ -1,3 +1,4 @@"), "{diff}");
    assert!(diff.contains("<ins>"), "intraline changes marked:\n{diff}");
    let split_href = link(&diff, "Side by side");
    let split = rig.dom(&split_href);
    assert!(split.contains("class=\"del\"") && split.contains("class=\"add\""));
    screenshot(&rig.profile, &rig.url(&split_href), "diff-split");
    // Blame: lines 1 and 3 from r1, 2 and 4 from r2.
    let blame_href = link(&file, "Blame");
    let blame = rig.dom(&blame_href);
    let revs: Vec<&str> = blame
        .split("<tr id=\"L")
        .skip(1)
        .map(|row| {
            let a = row.find("/rev/").expect("a revision link") + 5;
            &row[a..a + row[a..].find('/').expect("rev/N/")]
        })
        .collect();
    assert_eq!(revs, ["1", "2", "1", "2"], "{blame}");
    screenshot(&rig.profile, &rig.url(&blame_href), "blame");
    // Search: paths and messages; nothing under /secret.
    let search = rig.dom("/demo/!svn/web/search/HEAD/?q=plan");
    assert!(!search.contains("tweak main and the plan"), "{search}");
    assert!(!search.contains("/secret"), "{search}");
    let search = rig.dom("/demo/!svn/web/search/HEAD/?q=hostile");
    assert!(search.contains(">r3<"), "{search}");
    let search = rig.dom("/demo/!svn/web/search/HEAD/?q=evil");
    assert!(search.contains("/trunk/evil.html"), "{search}");
    screenshot(
        &rig.profile,
        &rig.url("/demo/!svn/web/search/HEAD/?q=evil"),
        "search",
    );
    // The hostile files, shown and raw, and the revision with the hostile message.
    for name in ["evil.html", "evil.svg", "evil.js"] {
        let page = rig.dom(&link(&trunk, name));
        // Shown as text (highlighted: the words may sit in spans of their own).
        assert!(page.contains("pwned"), "{page}");
        assert!(!page.contains("<script"), "{page}");
        let raw = rig.dom(&link(&page, "Raw"));
        assert!(!raw.contains("<script>document"), "{raw}");
    }
    let named = rig.dom(&link(
        &trunk,
        "&lt;svg onload=\"document.title='pwned'\"&gt;.txt",
    ));
    assert!(named.contains("a file with a hostile name"), "{named}");
    rig.dom("/demo/!svn/web/rev/3/");
    rig.dom("/demo/!svn/web/log/HEAD/");
    screenshot(
        &rig.profile,
        &rig.url("/demo/!svn/web/rev/3/"),
        "hostile-revision",
    );
    assert!(
        !rig.beacon_hit(),
        "a script or image of the repository's content ran"
    );
}

#[test]
fn pages_of_hidden_paths_are_refused_and_repository_urls_answer_as_before() {
    let rig = rig();
    for page in ["browse", "raw", "log", "blame", "diff"] {
        let url = rig.url(&format!("/demo/!svn/web/{page}/HEAD/secret/plan.txt"));
        let out = Run::tool("curl")
            .args(["-s", "-o", "/dev/null", "-w", "%{http_code}"])
            .arg(&url)
            .success();
        assert_eq!(out.stdout_text(), "403", "{url}");
    }
    // The repository URL's GET is still mod_dav_svn's bare listing, and svn ls is unchanged.
    let listing = Run::tool("curl")
        .arg("-s")
        .arg(rig.url("/demo/trunk/"))
        .success();
    assert!(listing
        .stdout_text()
        .starts_with("<html><head><title>demo - Revision 3: /trunk</title>"));
    let ls = Run::tool("svn")
        .args(["ls", "--non-interactive"])
        .arg(rig.url("/demo/"))
        .success();
    assert_eq!(ls.stdout_text(), "trunk/\n");
    // The archive of the root: a .tar.gz of what the visitor may read, /secret left out.
    let tgz = rig.root.join("demo.tar.gz");
    Run::tool("curl")
        .args(["-s", "-f", "-o"])
        .arg(&tgz)
        .arg(rig.url("/demo/!svn/web/archive/HEAD/"))
        .success();
    let names = Run::tool("tar")
        .arg("tzf")
        .arg(&tgz)
        .success()
        .stdout_text();
    let mut names: Vec<&str> = names.lines().collect();
    names.sort_unstable();
    assert_eq!(names.len(), 8, "{names:?}");
    assert!(names.contains(&"demo-r3/trunk/main.rs"), "{names:?}");
    assert!(!names.iter().any(|n| n.contains("secret")), "{names:?}");
    let main = Run::tool("tar")
        .args(["xzOf"])
        .arg(&tgz)
        .arg("demo-r3/trunk/main.rs")
        .success()
        .stdout_text();
    assert!(main.contains("hello, world"), "{main}");
    // The same as a .zip (linked from the directory page), read by Python's zipfile:
    // every entry's CRC checked, /secret left out.
    let zip = rig.root.join("demo.zip");
    let head = Run::tool("curl")
        .args(["-s", "-f", "-D", "-", "-o"])
        .arg(&zip)
        .arg(rig.url("/demo/!svn/web/archive/HEAD/?format=zip"))
        .success()
        .stdout_text()
        .to_ascii_lowercase();
    assert!(head.contains("content-type: application/zip"), "{head}");
    assert!(head.contains("filename=\"demo-r3.zip\""), "{head}");
    let listed = Run::tool("python3")
        .args([
            "-c",
            "import sys, zipfile\n\
             z = zipfile.ZipFile(sys.argv[1])\n\
             assert z.testzip() is None\n\
             for i in z.infolist(): print(i.filename, i.file_size, i.date_time[0])\n\
             sys.stdout.write(z.read('demo-r3/trunk/main.rs').decode())",
        ])
        .arg(&zip)
        .success()
        .stdout_text();
    let mut entries: Vec<&str> = listed
        .lines()
        .filter(|l| l.starts_with("demo-r3/"))
        .collect();
    entries.sort_unstable();
    assert_eq!(entries.len(), 8, "{listed}");
    assert!(
        entries.iter().any(|e| e.starts_with("demo-r3/trunk/ 0 ")),
        "{listed}"
    );
    // Entries carry the revision's date, not zip's earliest (1980).
    assert!(
        entries
            .iter()
            .all(|e| e.rsplit(' ').next().is_some_and(|y| y != "1980")),
        "{listed}"
    );
    assert!(!listed.contains("secret"), "{listed}");
    assert!(listed.contains("println!(\"hello, world\");"), "{listed}");
    // A page's headers: the policy, nosniff; a raw HTML file is text.
    let head = Run::tool("curl")
        .args(["-s", "-D", "-", "-o", "/dev/null"])
        .arg(rig.url("/demo/!svn/web/raw/3/trunk/evil.html"))
        .success()
        .stdout_text()
        .to_ascii_lowercase();
    assert!(
        head.contains("content-type: text/plain; charset=utf-8"),
        "{head}"
    );
    assert!(head.contains("x-content-type-options: nosniff"), "{head}");
    assert!(
        head.contains("content-security-policy: default-src 'none'"),
        "{head}"
    );
    assert!(head.contains("sandbox"), "{head}");
}

/// A format-2 dump of 150 revisions made here: `trunk/ChangeLog` gets an entry of three
/// lines at the top in each revision and keeps its last 30 lines (old entries drop off the
/// bottom); `trunk/keep.txt` changes one of its lines in each revision and gains one every
/// seventh, its first line kept from r1; r1 also adds a binary and a gzip file. r60 copies
/// trunk to `branches/b`, where the two files go on changing. Dates one second apart.
fn long_history_dump() -> Vec<u8> {
    fn rev_header(out: &mut Vec<u8>, rev: u64) {
        let author = if rev.is_multiple_of(3) {
            "bob"
        } else {
            "alice"
        };
        let msg = format!("change {rev}");
        let date = format!("2026-01-01T00:{:02}:{:02}.000000Z", rev / 60, rev % 60);
        let props = format!(
            "K 10\nsvn:author\nV {}\n{author}\nK 8\nsvn:date\nV {}\n{date}\nK 7\nsvn:log\nV {}\n{msg}\nPROPS-END\n",
            author.len(),
            date.len(),
            msg.len()
        );
        out.extend_from_slice(
            format!(
                "Revision-number: {rev}\nProp-content-length: {n}\nContent-length: {n}\n\n{props}\n",
                n = props.len()
            )
            .as_bytes(),
        );
    }
    fn file(out: &mut Vec<u8>, path: &str, action: &str, text: &[u8]) {
        let props = if action == "add" { "PROPS-END\n" } else { "" };
        let mut head = format!("Node-path: {path}\nNode-kind: file\nNode-action: {action}\n");
        if !props.is_empty() {
            head.push_str(&format!("Prop-content-length: {}\n", props.len()));
        }
        head.push_str(&format!(
            "Text-content-length: {}\nContent-length: {}\n\n{props}",
            text.len(),
            text.len() + props.len()
        ));
        out.extend_from_slice(head.as_bytes());
        out.extend_from_slice(text);
        out.extend_from_slice(b"\n\n");
    }
    fn dir(out: &mut Vec<u8>, path: &str, copy: Option<(u64, &str)>) {
        let mut s = format!("Node-path: {path}\nNode-kind: dir\nNode-action: add\n");
        match copy {
            Some((rev, from)) => s.push_str(&format!(
                "Node-copyfrom-rev: {rev}\nNode-copyfrom-path: {from}\n\n\n"
            )),
            None => s.push_str("Prop-content-length: 10\nContent-length: 10\n\nPROPS-END\n\n\n"),
        }
        out.extend_from_slice(s.as_bytes());
    }
    let mut out = b"SVN-fs-dump-format-version: 2\n\n".to_vec();
    let mut log: Vec<String> = Vec::new();
    let mut keep: Vec<String> = (1..=12).map(|i| format!("keep line {i}\n")).collect();
    let mut at = "trunk";
    for rev in 1..=150u64 {
        rev_header(&mut out, rev);
        if rev == 1 {
            dir(&mut out, "trunk", None);
            dir(&mut out, "branches", None);
            let binary: Vec<u8> = (0..70_000u32).map(|i| (i * 7919 % 251) as u8).collect();
            file(&mut out, "trunk/blob.bin", "add", &binary);
            file(
                &mut out,
                "trunk/packed.gz",
                "add",
                b"\x1f\x8b\x08\x00not really gzip\n",
            );
        }
        if rev == 60 {
            dir(&mut out, "branches/b", Some((59, "trunk")));
            at = "branches/b";
        }
        let entry = (1..=3).map(|k| format!("entry {rev} line {k}\n"));
        log.splice(0..0, entry);
        log.truncate(30);
        if rev > 1 {
            let i = 1 + (rev as usize * 5) % (keep.len() - 1);
            keep[i] = format!("keep line {i} changed in r{rev}\n");
            if rev.is_multiple_of(7) {
                keep.push(format!("keep line added in r{rev}\n"));
            }
        }
        let action = if rev == 1 { "add" } else { "change" };
        file(
            &mut out,
            &format!("{at}/ChangeLog"),
            action,
            log.concat().as_bytes(),
        );
        file(
            &mut out,
            &format!("{at}/keep.txt"),
            action,
            keep.concat().as_bytes(),
        );
    }
    out
}

/// The revision of each line: `svn blame`'s first column, or a blame page's links.
fn blame_revs(page: &str) -> Vec<String> {
    page.split("<tr id=\"L")
        .skip(1)
        .map(|row| {
            let a = row.find("/rev/").expect("a revision link") + 5;
            row[a..a + row[a..].find('/').expect("rev/N/")].to_string()
        })
        .collect()
}

/// Blame pages attribute every line as `svn blame` does over the same server, on a history
/// of 150 revisions: a ChangeLog whose walk back stops early (every line attributed within
/// its last 10 versions), a file whose first line comes from r1 (the walk reads every
/// version, across several pages of history and the copy of trunk to a branch), and a
/// blame at an older revision. Archives of the branch hold what `svn export` writes, the
/// binary and the gzip file stored in the `.zip` and checked by `unzip -t` and Python's
/// `zipfile -t`.
#[test]
fn blame_and_archives_agree_with_svn_blame_and_svn_export() {
    require_tool("svn");
    require_tool("unzip");
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("root");
    let svelto = Path::new(env!("CARGO_BIN_EXE_svelto"));
    Run::new(svelto)
        .args(["admin", "create"])
        .arg(root.join("long"))
        .success();
    Run::new(svelto)
        .args(["admin", "load", "-q"])
        .arg(root.join("long"))
        .stdin_bytes(long_history_dump())
        .success();
    let server = Svelto::start_http(svelto, &root, &dir.path().join("serve.log"), "", &[]);
    let base = server.base_url();
    let get = |rel: &str| {
        Run::tool("curl")
            .args(["-s", "-f"])
            .arg(format!("{base}{rel}"))
            .success()
            .stdout_text()
    };
    for (path, rev) in [
        ("branches/b/ChangeLog", "HEAD"),
        ("branches/b/keep.txt", "HEAD"),
        ("trunk/keep.txt", "40"),
        ("trunk/ChangeLog", "5"),
    ] {
        let page = get(&format!("/long/!svn/web/blame/{rev}/{path}"));
        let svn = Run::tool("svn")
            .args(["blame", "--non-interactive"])
            .arg(format!("{base}/long/{path}@{rev}"))
            .success()
            .stdout_text();
        let expected: Vec<String> = svn
            .lines()
            .map(|l| l.split_whitespace().next().expect("a revision").to_string())
            .collect();
        assert!(expected.len() >= 12, "{path}@{rev}: {svn}");
        assert_eq!(blame_revs(&page), expected, "{path}@{rev}:\n{svn}");
    }
    // The ChangeLog's lines all come from its last 10 versions; keep.txt's first from r1.
    let changelog = blame_revs(&get("/long/!svn/web/blame/HEAD/branches/b/ChangeLog"));
    assert!(changelog
        .iter()
        .all(|r| r.parse::<u64>().expect("a number") > 140));
    assert_eq!(
        blame_revs(&get("/long/!svn/web/blame/HEAD/branches/b/keep.txt"))[0],
        "1"
    );
    // The branch's archives against `svn export` of it.
    let export = dir.path().join("export");
    Run::tool("svn")
        .args(["export", "-q", "--non-interactive"])
        .arg(format!("{base}/long/branches/b"))
        .arg(&export)
        .success();
    let zip = dir.path().join("b.zip");
    Run::tool("curl")
        .args(["-s", "-f", "-o"])
        .arg(&zip)
        .arg(format!(
            "{base}/long/!svn/web/archive/HEAD/branches/b?format=zip"
        ))
        .success();
    let tested = Run::tool("unzip")
        .arg("-t")
        .arg(&zip)
        .success()
        .stdout_text();
    assert!(tested.contains("No errors detected"), "{tested}");
    Run::tool("python3")
        .args(["-m", "zipfile", "-t"])
        .arg(&zip)
        .success();
    let listing = Run::tool("unzip")
        .arg("-v")
        .arg(&zip)
        .success()
        .stdout_text();
    for (name, method) in [
        ("blob.bin", "Stored"),
        ("packed.gz", "Stored"),
        ("keep.txt", "Defl:"),
    ] {
        let line = listing
            .lines()
            .find(|l| l.ends_with(&format!("/{name}")))
            .unwrap_or_else(|| panic!("no {name} in:\n{listing}"));
        assert!(line.contains(method), "{name} not {method}:\n{listing}");
    }
    let tgz = dir.path().join("b.tar.gz");
    Run::tool("curl")
        .args(["-s", "-f", "-o"])
        .arg(&tgz)
        .arg(format!("{base}/long/!svn/web/archive/HEAD/branches/b"))
        .success();
    for (archive, tool) in [(&zip, "unzip"), (&tgz, "tar")] {
        let out = dir.path().join(format!("out-{tool}"));
        std::fs::create_dir_all(&out).expect("out");
        match tool {
            "unzip" => Run::tool("unzip")
                .arg("-q")
                .arg(archive)
                .arg("-d")
                .arg(&out),
            _ => Run::tool("tar").arg("xzf").arg(archive).arg("-C").arg(&out),
        }
        .success();
        for name in ["blob.bin", "packed.gz", "keep.txt", "ChangeLog"] {
            let got = std::fs::read(out.join("long-b-r150").join(name)).expect("extracted");
            let want = std::fs::read(export.join(name)).expect("exported");
            assert!(
                got == want,
                "{name} from the {tool} archive differs from svn export's"
            );
        }
    }
}
