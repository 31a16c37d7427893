//! `svelto look`: svnlook's subcommands, options, output and errors, for hook scripts.
//!
//! Standard output is byte-identical to svnlook 1.14's for the same history (in a UTF-8
//! locale), with two exceptions: `proplist` lists properties sorted by name (svnlook's
//! order is an APR hash order, which changes from run to run, as is the order of XML
//! attributes), and `--show-ids` is refused (node-revision ids are FSFS's). In the C
//! locale svnlook fails on non-ASCII output (E000022) where this prints UTF-8. Standard error and exit codes keep svnlook's form, with
//! "svelto look" where svnlook names itself (`svelto look: E160013: ...`).
//!
//! Arguments are parsed as svnlook parses them (apr_getopt: options anywhere, grouped
//! short options, `--opt=value`), not with clap, so that usage errors match.

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use svelto_core::{join, NodeKind, PropList, Revnum};
use svelto_repos::diff::{self, DiffOptions};
use svelto_repos::look::{change_tree, dirs_changed, ChangeNode};
use svelto_repos::{NodeHistory, ReposError};
use svelto_store::{Repo, StoreError};

const PROG: &str = "svelto look";

/// An error as svnlook prints it: each line `svelto look: E<code>: <message>`.
#[derive(Debug)]
struct LookError {
    /// Outermost first.
    chain: Vec<(u32, String)>,
}

impl LookError {
    fn new(code: u32, msg: impl Into<String>) -> Self {
        LookError {
            chain: vec![(code, msg.into())],
        }
    }
    fn args(code: u32, msg: &str) -> Self {
        LookError {
            chain: vec![
                (code, format!("Try '{PROG} help' for more info")),
                (code, msg.to_string()),
            ],
        }
    }
}

const E_NOT_FOUND: u32 = 160013;
const E_NO_SUCH_REVISION: u32 = 160006;
const E_NO_SUCH_TXN: u32 = 160007;
const E_NOT_FILE: u32 = 160017;
const E_NOT_DIRECTORY: u32 = 160016;
const E_MALFORMED_TXN_ID: u32 = 160053;
const E_PROP_NOT_FOUND: u32 = 200017;
const E_ARG_PARSING: u32 = 205000;
const E_INSUFFICIENT_ARGS: u32 = 205001;
const E_MUTUALLY_EXCLUSIVE: u32 = 205002;
const E_INCORRECT_PARAMS: u32 = 200004;
const E_UNSUPPORTED: u32 = 200007;
const E_EXTERNAL_PROGRAM: u32 = 200012;
const E_INVALID_DIFF_OPTION: u32 = 200016;
const E_IO: u32 = 2;

impl From<StoreError> for LookError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NoSuchRevision(r) => {
                LookError::new(E_NO_SUCH_REVISION, format!("No such revision {r}"))
            }
            StoreError::NoSuchTxn(t) if !fsfs_txn_id(&t) => {
                LookError::new(E_MALFORMED_TXN_ID, format!("malformed txn id '{t}'"))
            }
            StoreError::NoSuchTxn(t) => {
                LookError::new(E_NO_SUCH_TXN, format!("No such transaction '{t}'"))
            }
            other => LookError::new(160004, other.to_string()),
        }
    }
}

/// A transaction name FSFS could have made (`REV-SEQ`, the sequence in base 36): other
/// names are "malformed" to svnlook rather than missing.
fn fsfs_txn_id(name: &str) -> bool {
    match name.split_once('-') {
        Some((rev, seq)) => {
            !rev.is_empty()
                && rev.bytes().all(|b| b.is_ascii_digit())
                && !seq.is_empty()
                && seq
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
        }
        None => false,
    }
}

impl From<ReposError> for LookError {
    fn from(e: ReposError) -> Self {
        match e {
            ReposError::Store(s) => s.into(),
            ReposError::NoSuchRevision(r) => {
                LookError::new(E_NO_SUCH_REVISION, format!("No such revision {r}"))
            }
            ReposError::NotFound { .. } | ReposError::NotDirectory { .. } => {
                LookError::new(E_NOT_FOUND, e.to_string())
            }
            ReposError::Svn { kind, message } => LookError::new(kind.code(), message),
            other => LookError::new(160004, other.to_string()),
        }
    }
}

impl From<io::Error> for LookError {
    fn from(e: io::Error) -> Self {
        LookError::new(E_IO, format!("Write error: {e}"))
    }
}

type Result<T, E = LookError> = std::result::Result<T, E>;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Opt {
    Help,
    CopyInfo,
    DiffCopyFrom,
    FullPaths,
    Limit,
    NoDiffAdded,
    NoDiffDeleted,
    DiffCmd,
    IgnoreProperties,
    PropertiesOnly,
    MemoryCacheSize,
    NoNewline,
    NonRecursive,
    Revision,
    Revprop,
    ShowIds,
    ShowInheritedProps,
    Transaction,
    Verbose,
    Version,
    Xml,
    Extensions,
    Quiet,
}

/// (option, long name, short letter, takes an argument)
const OPTIONS: &[(Opt, &str, Option<char>, bool)] = &[
    (Opt::Help, "help", Some('h'), false),
    (Opt::Help, "", Some('?'), false),
    (Opt::CopyInfo, "copy-info", None, false),
    (Opt::DiffCopyFrom, "diff-copy-from", None, false),
    (Opt::FullPaths, "full-paths", None, false),
    (Opt::Limit, "limit", Some('l'), true),
    (Opt::NoDiffAdded, "no-diff-added", None, false),
    (Opt::NoDiffDeleted, "no-diff-deleted", None, false),
    (Opt::DiffCmd, "diff-cmd", None, true),
    (Opt::IgnoreProperties, "ignore-properties", None, false),
    (Opt::PropertiesOnly, "properties-only", None, false),
    (Opt::MemoryCacheSize, "memory-cache-size", Some('M'), true),
    (Opt::NoNewline, "no-newline", None, false),
    (Opt::NonRecursive, "non-recursive", Some('N'), false),
    (Opt::Revision, "revision", Some('r'), true),
    (Opt::Revprop, "revprop", None, false),
    (Opt::ShowIds, "show-ids", None, false),
    (Opt::ShowInheritedProps, "show-inherited-props", None, false),
    (Opt::Transaction, "transaction", Some('t'), true),
    (Opt::Verbose, "verbose", Some('v'), false),
    (Opt::Version, "version", None, false),
    (Opt::Xml, "xml", None, false),
    (Opt::Extensions, "extensions", Some('x'), true),
    (Opt::Quiet, "quiet", Some('q'), false),
];

fn option_display(opt: Opt) -> String {
    let Some((_, long, short, arg)) = OPTIONS.iter().find(|o| o.0 == opt) else {
        return String::new();
    };
    let arg = if *arg { " ARG" } else { "" };
    match short {
        Some(s) => format!("-{s} [--{long}]{arg}"),
        None => format!("--{long}{arg}"),
    }
}

struct Sub {
    name: &'static str,
    aliases: &'static [&'static str],
    opts: &'static [Opt],
}

use Opt::*;
const SUBCOMMANDS: &[Sub] = &[
    Sub {
        name: "author",
        aliases: &[],
        opts: &[Revision, Transaction],
    },
    Sub {
        name: "cat",
        aliases: &[],
        opts: &[Revision, Transaction],
    },
    Sub {
        name: "changed",
        aliases: &[],
        opts: &[Revision, Transaction, CopyInfo],
    },
    Sub {
        name: "date",
        aliases: &[],
        opts: &[Revision, Transaction],
    },
    Sub {
        name: "diff",
        aliases: &[],
        opts: &[
            Revision,
            Transaction,
            NoDiffDeleted,
            NoDiffAdded,
            DiffCopyFrom,
            DiffCmd,
            Extensions,
            IgnoreProperties,
            PropertiesOnly,
        ],
    },
    Sub {
        name: "dirs-changed",
        aliases: &[],
        opts: &[Revision, Transaction],
    },
    Sub {
        name: "filesize",
        aliases: &[],
        opts: &[Revision, Transaction],
    },
    Sub {
        name: "help",
        aliases: &["?", "h"],
        opts: &[],
    },
    Sub {
        name: "history",
        aliases: &[],
        opts: &[Revision, ShowIds, Limit],
    },
    Sub {
        name: "info",
        aliases: &[],
        opts: &[Revision, Transaction],
    },
    Sub {
        name: "log",
        aliases: &[],
        opts: &[Revision, Transaction],
    },
    Sub {
        name: "propget",
        aliases: &["pget", "pg"],
        opts: &[Revision, Transaction, Verbose, Revprop, ShowInheritedProps],
    },
    Sub {
        name: "proplist",
        aliases: &["plist", "pl"],
        opts: &[
            Revision,
            Transaction,
            Verbose,
            Revprop,
            Xml,
            ShowInheritedProps,
        ],
    },
    Sub {
        name: "lock",
        aliases: &[],
        opts: &[],
    },
    Sub {
        name: "tree",
        aliases: &[],
        opts: &[
            Revision,
            Transaction,
            NonRecursive,
            ShowIds,
            FullPaths,
            MemoryCacheSize,
        ],
    },
    Sub {
        name: "uuid",
        aliases: &[],
        opts: &[],
    },
    Sub {
        name: "youngest",
        aliases: &[],
        opts: &[NoNewline],
    },
];

#[derive(Default)]
struct State {
    repos: Option<String>,
    arg1: Option<String>,
    arg2: Option<String>,
    more_args: bool,
    rev: Option<Revnum>,
    txn: Option<String>,
    limit: i64,
    show_ids: bool,
    no_diff_deleted: bool,
    no_diff_added: bool,
    diff_copy_from: bool,
    verbose: bool,
    revprop: bool,
    full_paths: bool,
    copy_info: bool,
    non_recursive: bool,
    xml: bool,
    extensions: Option<String>,
    ignore_properties: bool,
    properties_only: bool,
    diff_cmd: Option<String>,
    show_inherited_props: bool,
    no_newline: bool,
    help: bool,
    version: bool,
}

/// Runs `svelto look ARGS...` (the words after `look`).
pub fn main(args: Vec<OsString>) -> ExitCode {
    let args: Vec<String> = args
        .into_iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut stdout = io::BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let result = run(&args, &mut stdout);
    let flushed = stdout.flush();
    drop(stdout);
    let code = match result {
        Ok(code) => code,
        Err(e) => {
            let mut err = io::stderr().lock();
            for (code, msg) in &e.chain {
                let _ = writeln!(err, "{PROG}: E{code:06}: {msg}");
            }
            1
        }
    };
    if let Err(e) = flushed {
        if e.kind() != io::ErrorKind::BrokenPipe {
            let _ = writeln!(io::stderr(), "{PROG}: E{E_IO:06}: Write error: {e}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::from(code)
}

fn usage_hint() -> u8 {
    let _ = writeln!(io::stderr(), "Type '{PROG} help' for usage.");
    1
}

/// svnlook's option parser; Ok(exit code) for usage errors it reports itself.
fn run(args: &[String], out: &mut dyn Write) -> Result<u8> {
    if args.is_empty() {
        return Ok(usage_hint());
    }
    let mut st = State::default();
    let mut positional: Vec<String> = Vec::new();
    let mut received: Vec<Opt> = Vec::new();
    let mut i = 0;
    let mut options_done = false;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if options_done || !a.starts_with('-') || a == "-" {
            positional.push(a.clone());
            continue;
        }
        if a == "--" {
            options_done = true;
            continue;
        }
        let mut found: Vec<(Opt, Option<String>)> = Vec::new();
        if let Some(long) = a.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let Some(&(opt, _, _, takes)) =
                OPTIONS.iter().find(|o| o.1 == name && !name.is_empty())
            else {
                let _ = writeln!(io::stderr(), "{PROG}: invalid option: {a}");
                return Ok(usage_hint());
            };
            let value = if takes {
                match inline {
                    Some(v) => Some(v),
                    None if i < args.len() => {
                        i += 1;
                        Some(args[i - 1].clone())
                    }
                    None => {
                        let _ = writeln!(io::stderr(), "{PROG}: missing argument: {name}");
                        return Ok(usage_hint());
                    }
                }
            } else {
                None
            };
            found.push((opt, value));
        } else {
            let chars: Vec<char> = a[1..].chars().collect();
            let mut j = 0;
            while j < chars.len() {
                let c = chars[j];
                j += 1;
                let Some(&(opt, _, _, takes)) = OPTIONS.iter().find(|o| o.2 == Some(c)) else {
                    let _ = writeln!(io::stderr(), "{PROG}: invalid option character: {c}");
                    return Ok(usage_hint());
                };
                if takes {
                    let rest: String = chars[j..].iter().collect();
                    let value = if !rest.is_empty() {
                        rest
                    } else if i < args.len() {
                        i += 1;
                        args[i - 1].clone()
                    } else {
                        let _ = writeln!(io::stderr(), "{PROG}: missing argument: {c}");
                        return Ok(usage_hint());
                    };
                    found.push((opt, Some(value)));
                    break;
                }
                found.push((opt, None));
            }
        }
        for (opt, value) in found {
            received.push(opt);
            let value = value.unwrap_or_default();
            match opt {
                Revision => st.rev = Some(parse_revnum(&value)?),
                Transaction => st.txn = Some(value),
                MemoryCacheSize => {
                    if value.trim().parse::<u64>().is_err() {
                        return Err(LookError::new(
                            E_ARG_PARSING,
                            format!("Could not convert '{value}' into a number"),
                        ));
                    }
                }
                NonRecursive => st.non_recursive = true,
                Verbose => st.verbose = true,
                Help => st.help = true,
                Quiet => {}
                Revprop => st.revprop = true,
                Xml => st.xml = true,
                Version => st.version = true,
                ShowIds => st.show_ids = true,
                Limit => {
                    let n: i64 = value.trim().parse().map_err(|_| {
                        LookError::new(E_ARG_PARSING, "Non-numeric limit argument given")
                    })?;
                    if n <= 0 {
                        return Err(LookError::new(
                            E_INCORRECT_PARAMS,
                            "Argument to --limit must be positive",
                        ));
                    }
                    st.limit = n;
                }
                NoDiffDeleted => st.no_diff_deleted = true,
                NoDiffAdded => st.no_diff_added = true,
                DiffCopyFrom => st.diff_copy_from = true,
                FullPaths => st.full_paths = true,
                CopyInfo => st.copy_info = true,
                Extensions => st.extensions = Some(value),
                IgnoreProperties => st.ignore_properties = true,
                PropertiesOnly => st.properties_only = true,
                DiffCmd => st.diff_cmd = Some(value),
                ShowInheritedProps => st.show_inherited_props = true,
                NoNewline => st.no_newline = true,
            }
        }
    }
    if st.rev.is_some() && st.txn.is_some() {
        return Err(LookError::new(
            E_MUTUALLY_EXCLUSIVE,
            "The '--transaction' (-t) and '--revision' (-r) arguments cannot co-exist",
        ));
    }
    if st.show_inherited_props && st.revprop {
        return Err(LookError::new(
            E_MUTUALLY_EXCLUSIVE,
            "Cannot use the '--show-inherited-props' option with the '--revprop' option",
        ));
    }
    let mut rest = positional.into_iter();
    let sub: &Sub = if st.help {
        help_sub()
    } else {
        match rest.next() {
            None if st.version => return version(out),
            None => {
                let _ = writeln!(io::stderr(), "Subcommand argument required");
                return Ok(usage_hint());
            }
            Some(name) => match SUBCOMMANDS
                .iter()
                .find(|s| s.name == name || s.aliases.contains(&name.as_str()))
            {
                Some(s) => s,
                None => {
                    let _ = writeln!(io::stderr(), "Unknown subcommand: '{name}'");
                    let code = usage_hint();
                    if name == "verify" {
                        let _ = writeln!(io::stderr(), "Try 'svelto admin verify' instead.");
                    }
                    return Ok(code);
                }
            },
        }
    };
    if sub.name == "help" {
        return help(out, rest.collect());
    }
    let Some(repos) = rest.next() else {
        let _ = writeln!(io::stderr(), "Repository argument required");
        return Ok(usage_hint());
    };
    let repos = internal_style(&repos);
    if is_url(&repos) {
        let _ = writeln!(io::stderr(), "'{repos}' is a URL when it should be a path");
        return Ok(1);
    }
    st.repos = Some(repos);
    st.arg1 = rest.next().map(|a| internal_style(&a));
    st.arg2 = rest.next().map(|a| internal_style(&a));
    st.more_args = rest.next().is_some();
    for opt in &received {
        if *opt == Help || sub.opts.contains(opt) {
            continue;
        }
        let _ = writeln!(
            io::stderr(),
            "Subcommand '{}' doesn't accept option '{}'\nType '{PROG} help {}' for usage.",
            sub.name,
            option_display(*opt),
            sub.name
        );
        return Ok(1);
    }
    dispatch(sub.name, &st, out)?;
    Ok(0)
}

fn help_sub() -> &'static Sub {
    const HELP: Sub = Sub {
        name: "help",
        aliases: &[],
        opts: &[],
    };
    SUBCOMMANDS
        .iter()
        .find(|s| s.name == "help")
        .unwrap_or(&HELP)
}

fn parse_revnum(s: &str) -> Result<Revnum> {
    // strtol: leading whitespace and a sign, then digits; nothing may follow.
    let t = s.trim_start();
    let t = t.strip_prefix('+').unwrap_or(t);
    if t.is_empty() && s.trim_start().len() == s.trim_start().trim_start_matches('+').len() {
        return Ok(0);
    }
    t.parse::<Revnum>()
        .map_err(|_| LookError::new(E_ARG_PARSING, "Invalid revision number supplied"))
}

fn is_url(s: &str) -> bool {
    match s.find("://") {
        Some(i) => {
            i > 0
                && s[..i]
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'-' || b == b'.')
        }
        None => false,
    }
}

/// `svn_dirent_internal_style` for the arguments: repeated slashes and `.` components go,
/// and so does a trailing slash (but "/" stays "/").
fn internal_style(s: &str) -> String {
    let absolute = s.starts_with('/');
    let comps: Vec<&str> = s
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    let joined = comps.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

/// A path argument as a relpath of the repository.
fn rel(path: &str) -> String {
    path.trim_matches('/').to_string()
}

fn fspath(path: &str) -> String {
    format!("/{}", rel(path))
}

fn check_args(st: &State, n: usize) -> Result<()> {
    if (n == 0 && st.arg1.is_some()) || (n == 1 && st.arg2.is_some()) {
        return Err(LookError::args(E_ARG_PARSING, "Too many arguments given"));
    }
    if n == 1 && st.arg1.is_none() {
        return Err(LookError::args(
            E_INSUFFICIENT_ARGS,
            "Missing repository path argument",
        ));
    }
    Ok(())
}

/// The repository view and revision a subcommand looks at.
struct Ctx<'s> {
    repo: Repo,
    rev: Revnum,
    txn: Option<&'s str>,
    st: &'s State,
}

fn open(st: &State) -> Result<Ctx<'_>> {
    let path = PathBuf::from(st.repos.as_deref().unwrap_or(""));
    let opened = match &st.txn {
        Some(name) => Repo::open_txn(&path, name).map(|(r, rev)| (r, Some(rev))),
        None => Repo::open(&path).map(|r| (r, None)),
    };
    let (repo, txn_rev) = match opened {
        Ok(x) => x,
        Err(StoreError::NotARepository(_)) => {
            return Err(LookError::new(
                E_IO,
                format!(
                    "Can't open file '{}/format': No such file or directory",
                    path.display()
                ),
            ))
        }
        Err(e) => return Err(e.into()),
    };
    let rev = match (txn_rev, st.rev) {
        (Some(r), _) => r,
        (None, Some(r)) => r,
        (None, None) => repo.youngest(),
    };
    Ok(Ctx {
        repo,
        rev,
        txn: st.txn.as_deref(),
        st,
    })
}

impl Ctx<'_> {
    fn revprops(&self) -> Result<PropList> {
        Ok(self.repo.revprops(self.rev)?)
    }

    fn revprop(&self, name: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.revprops()?.remove(name.as_bytes()))
    }

    /// The error FSFS gives when it cannot open `path` (shown as `shown`): a file on the
    /// way is "not a directory", else the path is not found.
    fn open_error(&self, path: &str, shown: &str) -> LookError {
        let rel = rel(path);
        let mut so_far = String::new();
        let comps: Vec<&str> = rel.split('/').filter(|c| !c.is_empty()).collect();
        for comp in comps.iter().take(comps.len().saturating_sub(1)) {
            so_far = join(&so_far, comp);
            match self.repo.lookup(self.rev, &so_far) {
                Ok(Some((_, n))) if n.kind == NodeKind::Dir => continue,
                Ok(Some(_)) => {
                    let uuid = self.repo.uuid().unwrap_or_default();
                    let whence = match self.txn {
                        Some(t) => format!("transaction '{t}'"),
                        None => format!("revision {}", self.rev),
                    };
                    return LookError {
                        chain: vec![
                            (
                                E_NOT_DIRECTORY,
                                format!("Failure opening '/{so_far}' in {whence}"),
                            ),
                            (
                                E_NOT_DIRECTORY,
                                format!("'/{so_far}' is not a directory in filesystem '{uuid}'"),
                            ),
                        ],
                    };
                }
                _ => break,
            }
        }
        self.not_found(shown)
    }

    /// svnlook's "File not found" for a path in this root (shown as given).
    fn not_found(&self, path: &str) -> LookError {
        match self.txn {
            Some(t) => LookError::new(
                E_NOT_FOUND,
                format!("File not found: transaction '{t}', path '{path}'"),
            ),
            None => LookError::new(
                E_NOT_FOUND,
                format!("File not found: revision {}, path '{path}'", self.rev),
            ),
        }
    }

    /// The node at a path argument, or svnlook's `verify_path` error naming `shown`.
    fn verify_path(
        &self,
        path: &str,
        shown: &str,
    ) -> Result<std::sync::Arc<svelto_store::NodeRev>> {
        match self.repo.lookup(self.rev, &rel(path))? {
            Some((_, n)) => Ok(n),
            None if is_url(path) => Err(LookError::new(
                E_NOT_FOUND,
                format!("'{shown}' is a URL, probably should be a path"),
            )),
            None => Err(LookError::new(
                E_NOT_FOUND,
                format!("Path '{shown}' does not exist"),
            )),
        }
    }
}

fn dispatch(name: &str, st: &State, out: &mut dyn Write) -> Result<()> {
    match name {
        "author" => {
            check_args(st, 0)?;
            let c = open(st)?;
            do_author(&c, out)
        }
        "cat" => {
            check_args(st, 1)?;
            let c = open(st)?;
            let path = st.arg1.as_deref().unwrap_or("");
            let node = c.verify_path(path, path)?;
            let Some(text) = node.text.filter(|_| node.kind == NodeKind::File) else {
                return Err(LookError::new(
                    E_NOT_FILE,
                    format!("Path '{path}' is not a file"),
                ));
            };
            c.repo.write_text(&text, out)?;
            Ok(())
        }
        "changed" => {
            check_args(st, 0)?;
            let c = open(st)?;
            if let Some(tree) = change_tree(&c.repo, c.rev)? {
                print_changed(&tree, "", st.copy_info, out)?;
            }
            Ok(())
        }
        "date" => {
            check_args(st, 0)?;
            let c = open(st)?;
            do_date(&c, out)
        }
        "diff" => {
            check_args(st, 0)?;
            let c = open(st)?;
            do_diff(&c, out)
        }
        "dirs-changed" => {
            check_args(st, 0)?;
            let c = open(st)?;
            if let Some(tree) = change_tree(&c.repo, c.rev)? {
                for d in dirs_changed(&tree) {
                    out.write_all(d.as_bytes())?;
                    out.write_all(b"/\n")?;
                }
            }
            Ok(())
        }
        "filesize" => {
            check_args(st, 1)?;
            let c = open(st)?;
            let path = st.arg1.as_deref().unwrap_or("");
            let node = c.verify_path(path, path)?;
            let Some(text) = node.text.filter(|_| node.kind == NodeKind::File) else {
                return Err(LookError::new(
                    E_NOT_FILE,
                    format!("Path '{path}' is not a file"),
                ));
            };
            writeln!(out, "{}", text.size)?;
            Ok(())
        }
        "history" => {
            if st.arg2.is_some() {
                return Err(LookError::args(E_ARG_PARSING, "Too many arguments given"));
            }
            let c = open(st)?;
            do_history(&c, st.arg1.as_deref().unwrap_or("/"), out)
        }
        "info" => {
            check_args(st, 0)?;
            let c = open(st)?;
            do_author(&c, out)?;
            do_date(&c, out)?;
            do_log(&c, true, out)
        }
        "log" => {
            check_args(st, 0)?;
            let c = open(st)?;
            do_log(&c, false, out)
        }
        "propget" => {
            if st.arg1.is_none() {
                return Err(LookError::args(
                    E_INSUFFICIENT_ARGS,
                    if st.revprop {
                        "Missing propname argument"
                    } else {
                        "Missing propname and repository path arguments"
                    },
                ));
            }
            if !st.revprop && st.arg2.is_none() {
                return Err(LookError::args(
                    E_INSUFFICIENT_ARGS,
                    "Missing propname or repository path argument",
                ));
            }
            if (st.revprop && st.arg2.is_some()) || st.more_args {
                return Err(LookError::args(E_ARG_PARSING, "Too many arguments given"));
            }
            let c = open(st)?;
            do_propget(&c, out)
        }
        "proplist" => {
            check_args(st, if st.revprop { 0 } else { 1 })?;
            let c = open(st)?;
            do_proplist(&c, out)
        }
        "tree" => {
            if st.arg2.is_some() {
                return Err(LookError::args(E_ARG_PARSING, "Too many arguments given"));
            }
            let c = open(st)?;
            do_tree(&c, st.arg1.as_deref().unwrap_or(""), out)
        }
        "lock" => {
            check_args(st, 1)?;
            let c = open(st)?;
            do_lock(&c, st.arg1.as_deref().unwrap_or(""), out)
        }
        "uuid" => {
            check_args(st, 0)?;
            let c = open(st)?;
            writeln!(out, "{}", c.repo.uuid()?)?;
            Ok(())
        }
        "youngest" => {
            check_args(st, 0)?;
            let c = open(st)?;
            write!(out, "{}{}", c.rev, if st.no_newline { "" } else { "\n" })?;
            Ok(())
        }
        _ => Err(LookError::new(
            E_ARG_PARSING,
            format!("Unknown subcommand: '{name}'"),
        )),
    }
}

/// svnlook's `lock`: the lock on a path, if any (nothing printed when there is none).
fn do_lock(c: &Ctx, path: &str, out: &mut dyn Write) -> Result<()> {
    let relpath = path.trim_matches('/');
    let Some(lock) = svelto_repos::locks::get_lock(c.repo.path(), relpath)? else {
        return Ok(());
    };
    let human = |d: &str| crate::localtime::human_date(d).unwrap_or_else(|| d.to_string());
    writeln!(out, "UUID Token: {}", lock.token)?;
    writeln!(out, "Owner: {}", lock.owner)?;
    writeln!(out, "Created: {}", human(&lock.created))?;
    writeln!(
        out,
        "Expires: {}",
        lock.expires.as_deref().map(human).unwrap_or_default()
    )?;
    let lines = lock
        .comment
        .as_deref()
        .map_or(0, |c| c.matches('\n').count() + 1);
    writeln!(
        out,
        "Comment ({lines} line{}):\n{}",
        if lines == 1 { "" } else { "s" },
        lock.comment.as_deref().unwrap_or("")
    )?;
    Ok(())
}

fn do_author(c: &Ctx, out: &mut dyn Write) -> Result<()> {
    if let Some(a) = c.revprop("svn:author")? {
        out.write_all(cstr(&a))?;
    }
    out.write_all(b"\n")?;
    Ok(())
}

/// A value as a C string: up to its first NUL.
fn cstr(v: &[u8]) -> &[u8] {
    match v.iter().position(|&b| b == 0) {
        Some(i) => &v[..i],
        None => v,
    }
}

fn do_date(c: &Ctx, out: &mut dyn Write) -> Result<()> {
    if let Some(d) = c.revprop("svn:date")? {
        let s = String::from_utf8_lossy(cstr(&d)).into_owned();
        match crate::localtime::human_date(&s) {
            Some(h) => out.write_all(h.as_bytes())?,
            None => return Err(LookError::new(125003, format!("Can't parse date '{s}'"))),
        }
    }
    out.write_all(b"\n")?;
    Ok(())
}

/// Line endings to LF, as `svn_subst_translate_cstring2` with repair does.
fn to_lf(v: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len());
    let mut i = 0;
    while i < v.len() {
        match v[i] {
            b'\r' => {
                out.push(b'\n');
                if v.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    out
}

fn do_log(c: &Ctx, print_size: bool, out: &mut dyn Write) -> Result<()> {
    let Some(log) = c.revprop("svn:log")? else {
        out.write_all(if print_size { b"0\n" } else { b"\n" })?;
        return Ok(());
    };
    let text = to_lf(cstr(&log));
    if print_size {
        writeln!(out, "{}", text.len())?;
    }
    out.write_all(&text)?;
    out.write_all(b"\n")?;
    Ok(())
}

fn print_changed(
    node: &ChangeNode,
    path: &str,
    copy_info: bool,
    out: &mut dyn Write,
) -> Result<()> {
    let mut status = *b"_  ";
    let mut print = true;
    match node.action {
        b'A' => {
            status[0] = b'A';
            if copy_info && node.copyfrom.is_some() {
                status[2] = b'+';
            }
        }
        b'D' => status[0] = b'D',
        b'R' => {
            if !node.text_mod && !node.prop_mod {
                print = false;
            }
            if node.text_mod {
                status[0] = b'U';
            }
            if node.prop_mod {
                status[1] = b'U';
            }
        }
        _ => print = false,
    }
    if print {
        let slash = if node.kind == NodeKind::Dir { "/" } else { "" };
        out.write_all(&status)?;
        writeln!(out, " {path}{slash}")?;
        if copy_info {
            if let Some((r, from)) = &node.copyfrom {
                writeln!(out, "    (from {from}{slash}:r{r})")?;
            }
        }
    }
    for child in &node.children {
        print_changed(child, &join(path, &child.name), copy_info, out)?;
    }
    Ok(())
}

fn do_history(c: &Ctx, path: &str, out: &mut dyn Write) -> Result<()> {
    if c.st.show_ids {
        return Err(LookError::new(
            E_UNSUPPORTED,
            "--show-ids is not supported: Svelto's node-revision ids are not FSFS's",
        ));
    }
    out.write_all(b"REVISION   PATH\n--------   ----\n")?;
    c.repo.root(c.rev)?;
    let mut h = match NodeHistory::new(&c.repo, c.rev, &rel(path)) {
        Ok(h) => h,
        Err(ReposError::NotFound { .. }) => return Err(c.not_found(path)),
        // (svn_fs_node_history names the path as given.)
        Err(e) => return Err(e.into()),
    };
    let mut count = 0i64;
    while let Some((p, rev)) = h.prev()? {
        writeln!(out, "{rev:>8}   /{p}")?;
        count += 1;
        if c.st.limit > 0 && count >= c.st.limit {
            break;
        }
    }
    Ok(())
}

fn do_tree(c: &Ctx, path: &str, out: &mut dyn Write) -> Result<()> {
    if c.st.show_ids {
        return Err(LookError::new(
            E_UNSUPPORTED,
            "--show-ids is not supported: Svelto's node-revision ids are not FSFS's",
        ));
    }
    let Some((_, node)) = c.repo.lookup(c.rev, &rel(path))? else {
        return Err(c.open_error(path, &fspath(path)));
    };
    print_tree(c, path, &node, 0, out)
}

fn print_tree(
    c: &Ctx,
    path: &str,
    node: &svelto_store::NodeRev,
    indent: usize,
    out: &mut dyn Write,
) -> Result<()> {
    let full = c.st.full_paths;
    if !full {
        out.write_all(&b" ".repeat(indent))?;
    }
    let mut name = if full {
        path
    } else {
        path.rsplit('/').next().unwrap_or("")
    };
    if name.is_empty() {
        name = "/";
    }
    let is_dir = node.kind == NodeKind::Dir;
    out.write_all(name.as_bytes())?;
    if is_dir && name != "/" {
        out.write_all(b"/")?;
    }
    out.write_all(b"\n")?;
    if !is_dir || (c.st.non_recursive && indent != 0) {
        return Ok(());
    }
    let entries = c.repo.dir(node)?;
    for e in entries.iter() {
        let child_path = if path.starts_with('/') {
            if path == "/" {
                format!("/{}", e.name)
            } else {
                format!("{path}/{}", e.name)
            }
        } else {
            join(path, &e.name)
        };
        let child = c.repo.node(e.node)?;
        print_tree(c, &child_path, &child, indent + 1, out)?;
    }
    Ok(())
}

fn do_propget(c: &Ctx, out: &mut dyn Write) -> Result<()> {
    let st = c.st;
    let propname = st.arg1.as_deref().unwrap_or("");
    let (value, path, inherited) = if st.revprop {
        (c.revprop(propname)?, None, Vec::new())
    } else {
        let path = fspath(st.arg2.as_deref().unwrap_or(""));
        let node = c.verify_path(&path, &path)?;
        let value = c.repo.props(&node)?.remove(propname.as_bytes());
        let inherited = if st.show_inherited_props {
            inherited_with(c, &path, Some(propname))?
        } else {
            Vec::new()
        };
        (value, Some(path), inherited)
    };
    let Some(value) = value else {
        if !st.show_inherited_props || inherited.is_empty() {
            let msg = match (&path, c.txn) {
                (None, None) => format!("Property '{propname}' not found on revision {}", c.rev),
                (None, Some(t)) => format!("Property '{propname}' not found on transaction {t}"),
                (Some(p), txn) => {
                    let whence = match txn {
                        None => format!("revision {}", c.rev),
                        Some(t) => format!("transaction {t}"),
                    };
                    if st.show_inherited_props {
                        format!("Property '{propname}' not found on path '{p}' or inherited from a parent in {whence}")
                    } else {
                        format!("Property '{propname}' not found on path '{p}' in {whence}")
                    }
                }
            };
            return Err(LookError::new(E_PROP_NOT_FOUND, msg));
        }
        // Only inherited values.
        return print_pget_inherited(c, path.as_deref().unwrap_or("/"), &inherited, None, out);
    };
    if st.verbose || st.show_inherited_props {
        print_pget_inherited(
            c,
            path.as_deref().unwrap_or("/"),
            &inherited,
            Some(&value),
            out,
        )
    } else {
        out.write_all(&value)?;
        Ok(())
    }
}

fn print_pget_inherited(
    c: &Ctx,
    path: &str,
    inherited: &[(String, PropList)],
    value: Option<&[u8]>,
    out: &mut dyn Write,
) -> Result<()> {
    let st = c.st;
    let propname = st.arg1.as_deref().unwrap_or("");
    for (from, props) in inherited {
        if st.verbose {
            write!(out, "Inherited properties on '{path}',\nfrom '{from}':\n")?;
            print_prop_hash(props, false, out)?;
        } else if let Some(v) = props.values().next() {
            write!(out, "{from} - ")?;
            out.write_all(v)?;
            if inherited.len() > 1 || value.is_some() {
                out.write_all(b"\n")?;
            }
        }
    }
    if let Some(v) = value {
        if st.verbose {
            writeln!(out, "Properties on '{path}':")?;
            let mut one = PropList::new();
            one.insert(propname.as_bytes().to_vec(), v.to_vec());
            print_prop_hash(&one, false, out)?;
        } else {
            write!(out, "{path} - ")?;
            out.write_all(v)?;
        }
    }
    Ok(())
}

/// The properties `path` inherits from its parents (fspaths, root first), limited to
/// `only` when given.
fn inherited_with(c: &Ctx, path: &str, only: Option<&str>) -> Result<Vec<(String, PropList)>> {
    let list = svelto_repos::inherited_props(&c.repo, &rel(path), c.rev)?;
    let mut out = Vec::new();
    for (p, mut props) in list {
        if let Some(name) = only {
            match props.remove(name.as_bytes()) {
                Some(v) => {
                    props = PropList::new();
                    props.insert(name.as_bytes().to_vec(), v);
                }
                None => continue,
            }
        }
        out.push((format!("/{p}"), props));
    }
    Ok(out)
}

/// `svn_cmdline__indent_string`: `indent` before each line (line ends: `\n`, `\r`,
/// `\r\n`, `\n\r`); the text stops at a NUL.
fn indent_string(s: &[u8], indent: &[u8]) -> Vec<u8> {
    let s = cstr(s);
    let mut out = Vec::with_capacity(s.len() + 8);
    let mut i = 0;
    while i < s.len() {
        let start = i;
        while i < s.len() && s[i] != b'\r' && s[i] != b'\n' {
            i += 1;
        }
        if i < s.len() {
            let c = s[i];
            i += 1;
            if i < s.len() && ((c == b'\r' && s[i] == b'\n') || (c == b'\n' && s[i] == b'\r')) {
                i += 1;
            }
        }
        out.extend_from_slice(indent);
        out.extend_from_slice(&s[start..i]);
    }
    out
}

fn print_prop_hash(props: &PropList, names_only: bool, out: &mut dyn Write) -> Result<()> {
    for (name, value) in props {
        out.write_all(b"  ")?;
        out.write_all(name)?;
        out.write_all(b"\n")?;
        if !names_only {
            let mut v = cstr(value).to_vec();
            v.push(b'\n');
            out.write_all(&indent_string(&v, b"    "))?;
        }
    }
    Ok(())
}

fn do_proplist(c: &Ctx, out: &mut dyn Write) -> Result<()> {
    let st = c.st;
    let (props, path, inherited) = if st.revprop {
        (c.revprops()?, None, Vec::new())
    } else {
        let path = fspath(st.arg1.as_deref().unwrap_or(""));
        let node = c.verify_path(&path, &path)?;
        let inherited = if st.show_inherited_props {
            inherited_with(c, &path, None)?
        } else {
            Vec::new()
        };
        (c.repo.props(&node)?, Some(path), inherited)
    };
    if st.xml {
        let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<properties>\n");
        for (from, props) in &inherited {
            x.push_str(&format!("<target\n   path=\"{}\">\n", xml_attr(from)));
            xml_props(&mut x, props, !st.verbose, true);
            x.push_str("</target>\n");
        }
        match (&path, c.txn) {
            (Some(p), _) => x.push_str(&format!("<target\n   path=\"{}\">\n", xml_attr(p))),
            (None, None) => x.push_str(&format!("<revprops\n   rev=\"{}\">\n", c.rev)),
            (None, Some(t)) => x.push_str(&format!("<revprops\n   txn=\"{}\">\n", xml_attr(t))),
        }
        xml_props(&mut x, &props, !st.verbose, false);
        x.push_str(if path.is_some() {
            "</target>\n"
        } else {
            "</revprops>\n"
        });
        x.push_str("</properties>\n");
        out.write_all(x.as_bytes())?;
        return Ok(());
    }
    for (from, props) in &inherited {
        write!(
            out,
            "Inherited properties on '{}',\nfrom '{from}':\n",
            path.as_deref().unwrap_or("")
        )?;
        print_prop_hash(props, !st.verbose, out)?;
    }
    if let Some(p) = &path {
        writeln!(out, "Properties on '{p}':")?;
    }
    print_prop_hash(&props, !st.verbose, out)
}

fn xml_attr(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            '\r' => o.push_str("&#13;"),
            '\n' => o.push_str("&#10;"),
            '\t' => o.push_str("&#9;"),
            c => o.push(c),
        }
    }
    o
}

fn xml_cdata(v: &[u8]) -> String {
    let mut o = String::with_capacity(v.len());
    for ch in String::from_utf8_lossy(v).chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '\r' => o.push_str("&#13;"),
            c => o.push(c),
        }
    }
    o
}

/// `svn_xml_is_xml_safe`: valid UTF-8 without control characters other than tab, LF, CR.
fn xml_safe(v: &[u8]) -> bool {
    std::str::from_utf8(v).is_ok()
        && v.iter()
            .all(|&b| b >= 0x20 || b == b'\t' || b == b'\n' || b == b'\r')
}

fn base64_lines(v: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    let mut col = 0;
    for chunk in v.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = [
            T[(n >> 18) as usize & 63],
            T[(n >> 12) as usize & 63],
            if chunk.len() > 1 {
                T[(n >> 6) as usize & 63]
            } else {
                b'='
            },
            if chunk.len() > 2 {
                T[n as usize & 63]
            } else {
                b'='
            },
        ];
        for c in chars {
            s.push(c as char);
        }
        col += 4;
        if col == 76 {
            s.push('\n');
            col = 0;
        }
    }
    if col > 0 {
        s.push('\n');
    }
    s
}

fn xml_props(x: &mut String, props: &PropList, names_only: bool, inherited: bool) {
    let tag = if inherited {
        "inherited_property"
    } else {
        "property"
    };
    for (name, value) in props {
        let name = xml_attr(&String::from_utf8_lossy(name));
        if names_only {
            x.push_str(&format!("<{tag}\n   name=\"{name}\"/>\n"));
        } else if xml_safe(value) {
            x.push_str(&format!(
                "<{tag}\n   name=\"{name}\">{}</{tag}>\n",
                xml_cdata(value)
            ));
        } else {
            x.push_str(&format!(
                "<{tag}\n   name=\"{name}\"\n   encoding=\"base64\">{}</{tag}>\n",
                base64_lines(value)
            ));
        }
    }
}

const EQUAL_STRING: &str = "===================================================================";
const UNDER_STRING: &str = "___________________________________________________________________";

/// The roots a diff compares: the revision (or transaction) and a base revision.
struct DiffRun<'c> {
    c: &'c Ctx<'c>,
    opts: DiffOptions,
    /// The `-x` words, for `--diff-cmd`.
    words: Vec<String>,
    /// `svn:date` by revision, for the labels.
    dates: std::collections::HashMap<Revnum, Option<Vec<u8>>>,
    out: Vec<u8>,
}

fn do_diff(c: &Ctx, out: &mut dyn Write) -> Result<()> {
    let st = c.st;
    let words: Vec<String> = st
        .extensions
        .as_deref()
        .unwrap_or("")
        .split([' ', '\t', '\n', '\r'])
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect();
    let opts = if st.diff_cmd.is_some() {
        // The words are the external program's.
        DiffOptions::default()
    } else {
        DiffOptions::parse(&words).map_err(|e| LookError {
            chain: vec![
                (
                    E_INVALID_DIFF_OPTION,
                    "Error in options to internal diff".into(),
                ),
                (E_INVALID_DIFF_OPTION, e),
            ],
        })?
    };
    if c.rev == 0 {
        c.repo.root(0)?;
        return Ok(());
    }
    let Some(tree) = change_tree(&c.repo, c.rev)? else {
        return Ok(());
    };
    let mut run = DiffRun {
        c,
        opts,
        words,
        dates: Default::default(),
        out: Vec::new(),
    };
    // What was printed before a failure stays printed, as svnlook's stream does.
    let result = run.node(&tree, "", "", c.rev - 1);
    out.write_all(&run.out)?;
    result
}

/// A node in a revision: (revision, relpath).
type Location = (Revnum, String);

/// A property change: (name, old value, new value).
type PropChange<'p> = (&'p [u8], Option<&'p [u8]>, Option<&'p [u8]>);

/// svnlook's `svn_mime_type_is_binary` on a node's `svn:mime-type`.
fn is_binary(props: &PropList) -> bool {
    let Some(m) = props.get(&b"svn:mime-type"[..]) else {
        return false;
    };
    let m = cstr(m);
    let len = m
        .iter()
        .position(|&b| b == b';' || b == b' ')
        .unwrap_or(m.len());
    !m.starts_with(b"text/")
        && !(len == 15 && (&m[..15] == b"image/x-xbitmap" || &m[..15] == b"image/x-xpixmap"))
}

impl DiffRun<'_> {
    /// `path  date (rev N)` or `(txn NAME)`; `rev` None is the empty side.
    fn label(&mut self, path: &str, rev: Option<Revnum>) -> Result<Vec<u8>> {
        let (date, what) = match rev {
            None => (None, " (rev 0)".to_string()),
            Some(r) => {
                let date = match self.dates.get(&r) {
                    Some(d) => d.clone(),
                    None => {
                        let d = self.c.repo.revprops(r)?.remove(&b"svn:date"[..]);
                        self.dates.insert(r, d.clone());
                        d
                    }
                };
                let what = match (self.c.txn, r == self.c.rev) {
                    (Some(t), true) => format!(" (txn {t})"),
                    _ => format!(" (rev {r})"),
                };
                (date, what)
            }
        };
        let datestr = match date {
            Some(d) => {
                let d = cstr(&d);
                let day = &d[..d.len().min(10)];
                let time = d.get(11..).map(|t| &t[..t.len().min(8)]).unwrap_or(b"");
                let mut s = day.to_vec();
                s.push(b' ');
                s.extend_from_slice(time);
                s.extend_from_slice(b" UTC");
                s
            }
            None => b"                       ".to_vec(),
        };
        let mut l = path.as_bytes().to_vec();
        l.push(b'\t');
        l.extend_from_slice(&datestr);
        l.extend_from_slice(what.as_bytes());
        Ok(l)
    }

    fn node_at(&self, rev: Revnum, path: &str) -> Result<std::sync::Arc<svelto_store::NodeRev>> {
        match self.c.repo.lookup(rev, path)? {
            Some((_, n)) => Ok(n),
            None => Err(LookError::new(
                E_NOT_FOUND,
                format!("File not found: revision {rev}, path '/{path}'"),
            )),
        }
    }

    fn text(&self, node: &svelto_store::NodeRev) -> Result<std::sync::Arc<Vec<u8>>> {
        match &node.text {
            Some(t) => Ok(self.c.repo.read_text(t)?),
            None => Ok(std::sync::Arc::new(Vec::new())),
        }
    }

    fn node(
        &mut self,
        node: &ChangeNode,
        path: &str,
        base_path: &str,
        base_rev: Revnum,
    ) -> Result<()> {
        let c = self.c;
        let st = c.st;
        let mut base_path = base_path.to_string();
        let mut base_rev = base_rev;
        let mut header = Vec::new();
        let mut is_copy = false;
        if let Some((r, from)) = &node.copyfrom {
            is_copy = true;
            base_path = from.clone();
            base_rev = *r;
            header.extend_from_slice(
                format!("Copied: {path} (from rev {r}, {base_path})\n").as_bytes(),
            );
        }
        let mut do_diff = false;
        let mut orig_empty = false;
        let mut binary = false;
        // (original text, modified text), None for an empty side.
        let mut sides: (Option<Location>, Option<Location>) = (None, None);
        let action = node.action;
        if node.kind == NodeKind::File {
            if action == b'R' && node.text_mod {
                do_diff = true;
                sides = (
                    Some((base_rev, base_path.clone())),
                    Some((c.rev, path.to_string())),
                );
            } else if st.diff_copy_from && action == b'A' && is_copy {
                if node.text_mod {
                    do_diff = true;
                    sides = (
                        Some((base_rev, base_path.clone())),
                        Some((c.rev, path.to_string())),
                    );
                }
            } else if !st.no_diff_added && action == b'A' {
                do_diff = true;
                orig_empty = true;
                sides = (None, Some((c.rev, path.to_string())));
            } else if !st.no_diff_deleted && action == b'D' {
                do_diff = true;
                sides = (Some((base_rev, base_path.clone())), None);
            }
            if do_diff {
                for (r, p) in [&sides.0, &sides.1].into_iter().flatten() {
                    if !binary && is_binary(&c.repo.props(&*self.node_at(*r, p)?)?) {
                        binary = true;
                    }
                }
            }
            if header.is_empty() && (action != b'R' || node.text_mod) {
                let word = match action {
                    b'A' => "Added",
                    b'D' => "Deleted",
                    b'R' => "Modified",
                    _ => "Index",
                };
                header.extend_from_slice(format!("{word}: {path}\n").as_bytes());
            }
        }
        let mut header_printed = false;
        if do_diff && !st.properties_only {
            header.extend_from_slice(EQUAL_STRING.as_bytes());
            header.push(b'\n');
            if binary {
                header.extend_from_slice(b"(Binary files differ)\n\n");
                self.out.extend_from_slice(&header);
            } else {
                let a = match &sides.0 {
                    Some((r, p)) => self.text(&*self.node_at(*r, p)?)?,
                    None => std::sync::Arc::new(Vec::new()),
                };
                let b = match &sides.1 {
                    Some((r, p)) => self.text(&*self.node_at(*r, p)?)?,
                    None => std::sync::Arc::new(Vec::new()),
                };
                if let Some(cmd) = &st.diff_cmd {
                    self.out.extend_from_slice(&header);
                    let la = if orig_empty {
                        self.label(path, None)?
                    } else {
                        self.label(&base_path, Some(base_rev))?
                    };
                    let lb = self.label(path, Some(c.rev))?;
                    self.external_diff(cmd, &a, &b, &la, &lb)?;
                    self.out.push(b'\n');
                    header_printed = true;
                    return self.props_and_children(
                        node,
                        path,
                        &base_path,
                        base_rev,
                        is_copy,
                        header_printed,
                    );
                }
                let changes = diff::file_diff(&a, &b, &self.opts);
                if !changes.is_empty() {
                    self.out.extend_from_slice(&header);
                    let la = if orig_empty {
                        self.label(path, None)?
                    } else {
                        self.label(&base_path, Some(base_rev))?
                    };
                    let lb = self.label(path, Some(c.rev))?;
                    diff::write_unified_file(&mut self.out, &a, &b, &changes, &la, &lb, &self.opts);
                    self.out.push(b'\n');
                    header_printed = true;
                } else if !node.prop_mod
                    && ((!st.no_diff_added && action == b'A')
                        || (!st.no_diff_deleted && action == b'D'))
                {
                    self.out.extend_from_slice(&header);
                }
            }
        }
        self.props_and_children(node, path, &base_path, base_rev, is_copy, header_printed)
    }

    /// The property diff of a node (with a header if its text diff printed none), then
    /// its children.
    fn props_and_children(
        &mut self,
        node: &ChangeNode,
        path: &str,
        base_path: &str,
        base_rev: Revnum,
        is_copy: bool,
        header_printed: bool,
    ) -> Result<()> {
        let c = self.c;
        let st = c.st;
        let action = node.action;
        if node.prop_mod && action != b'D' && !st.ignore_properties {
            let local = c.repo.props(&*self.node_at(c.rev, path)?)?;
            let base = if (st.diff_copy_from && action == b'A' && is_copy) || action == b'R' {
                c.repo.props(&*self.node_at(base_rev, base_path)?)?
            } else {
                PropList::new()
            };
            let mut changes: Vec<PropChange> = Vec::new();
            for (k, v) in &local {
                if base.get(k) != Some(v) {
                    changes.push((k, base.get(k).map(|x| &x[..]), Some(v)));
                }
            }
            for (k, v) in &base {
                if !local.contains_key(k) {
                    changes.push((k, Some(v), None));
                }
            }
            changes.retain(|(k, _, _)| !k.starts_with(b"svn:entry:") && !k.starts_with(b"svn:wc:"));
            changes.sort_by(|a, b| a.0.cmp(b.0));
            if !changes.is_empty() {
                if !header_printed {
                    let la = self.label(base_path, Some(base_rev))?;
                    let lb = self.label(path, Some(c.rev))?;
                    self.out
                        .extend_from_slice(format!("Index: {path}\n{EQUAL_STRING}\n").as_bytes());
                    self.out.extend_from_slice(b"--- ");
                    self.out.extend_from_slice(&la);
                    self.out.extend_from_slice(b"\n+++ ");
                    self.out.extend_from_slice(&lb);
                    self.out.push(b'\n');
                }
                self.out.extend_from_slice(
                    format!("\nProperty changes on: {path}\n{UNDER_STRING}\n").as_bytes(),
                );
                for (name, old, new) in changes {
                    let action = match (old, new) {
                        (None, _) => "Added",
                        (_, None) => "Deleted",
                        _ => "Modified",
                    };
                    self.out.extend_from_slice(action.as_bytes());
                    self.out.extend_from_slice(b": ");
                    self.out.extend_from_slice(name);
                    self.out.push(b'\n');
                    diff::write_prop_hunks(&mut self.out, old.unwrap_or(b""), new.unwrap_or(b""));
                }
            }
        }
        for child in &node.children {
            self.node(
                child,
                &join(path, &child.name),
                &join(base_path, &child.name),
                base_rev,
            )?;
        }
        Ok(())
    }

    /// Runs `--diff-cmd` as `svn_io_run_diff2` does: the `-x` words (else `-u`), `-L` and
    /// the two labels, then two temporary files holding the texts.
    fn external_diff(&mut self, cmd: &str, a: &[u8], b: &[u8], la: &[u8], lb: &[u8]) -> Result<()> {
        use std::os::unix::ffi::OsStrExt;
        let dir = std::env::temp_dir();
        let stamp = format!("svelto-look-{}-{}", std::process::id(), self.out.len());
        let fa = dir.join(format!("{stamp}.orig.tmp"));
        let fb = dir.join(format!("{stamp}.tmp"));
        let written = std::fs::write(&fa, a).and_then(|_| std::fs::write(&fb, b));
        let result = written.and_then(|_| {
            let mut command = std::process::Command::new(cmd);
            if self.words.is_empty() {
                command.arg("-u");
            } else {
                command.args(&self.words);
            }
            command
                .arg("-L")
                .arg(std::ffi::OsStr::from_bytes(la))
                .arg("-L")
                .arg(std::ffi::OsStr::from_bytes(lb))
                .arg(&fa)
                .arg(&fb)
                .stderr(std::process::Stdio::inherit())
                .output()
        });
        let _ = std::fs::remove_file(&fa);
        let _ = std::fs::remove_file(&fb);
        let output = match result {
            Ok(o) => o,
            Err(e) => {
                // What the child svnlook forks prints when exec fails, then its exit code.
                let text = e.to_string();
                let reason = text.split(" (os error").next().unwrap_or(&text);
                let _ = write!(io::stderr(), "exec of '{cmd}' failed: {reason}");
                return Err(LookError::new(
                    E_EXTERNAL_PROGRAM,
                    format!("'{cmd}' returned 255"),
                ));
            }
        };
        self.out.extend_from_slice(&output.stdout);
        match output.status.code() {
            Some(0) | Some(1) => Ok(()),
            code => Err(LookError::new(
                E_EXTERNAL_PROGRAM,
                format!("'{cmd}' returned {}", code.unwrap_or(-1)),
            )),
        }
    }
}

fn version(out: &mut dyn Write) -> Result<u8> {
    writeln!(
        out,
        "svelto look, version {} (svnlook 1.14 compatible)",
        env!("CARGO_PKG_VERSION")
    )?;
    Ok(0)
}

fn help(out: &mut dyn Write, _topics: Vec<String>) -> Result<u8> {
    writeln!(
        out,
        "general usage: {PROG} SUBCOMMAND REPOS_PATH [ARGS & OPTIONS ...]\n\
         Subversion repository inspection tool (svnlook's subcommands and output).\n\
         Note: any subcommand which takes the '--revision' and '--transaction'\n      \
         options will, if invoked without one of those options, act on\n      \
         the repository's youngest revision.\n\nAvailable subcommands:"
    )?;
    for s in SUBCOMMANDS {
        if s.aliases.is_empty() {
            writeln!(out, "   {}", s.name)?;
        } else {
            writeln!(out, "   {} ({})", s.name, s.aliases.join(", "))?;
        }
    }
    Ok(0)
}
