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
//! short options, `--opt=value`), not with clap, so that usage errors match. What each
//! subcommand prints is `svelto_look`'s; this module parses, opens the repository (the
//! local engine: the composition root's choice) and prints errors.

mod help;
mod options;

use options::Opt::*;
use options::*;

pub use help::command;

use std::ffi::OsString;
use std::io::{self, Write};
use std::process::ExitCode;
use std::sync::Arc;
use svelto_core::{code, Revnum};
use svelto_look::{is_url, LookArgs, LookError, Result, E_IO, PROG};

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
    let mut st = LookArgs {
        zone: crate::localtime::zone(),
        ..LookArgs::default()
    };
    let (mut help_asked, mut version_asked) = (false, false);
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
                            code::CL_ARG_PARSING_ERROR,
                            format!("Could not convert '{value}' into a number"),
                        ));
                    }
                }
                NonRecursive => st.non_recursive = true,
                Verbose => st.verbose = true,
                Help => help_asked = true,
                Quiet => {}
                Revprop => st.revprop = true,
                Xml => st.xml = true,
                Version => version_asked = true,
                ShowIds => st.show_ids = true,
                Limit => {
                    let n: i64 = value.trim().parse().map_err(|_| {
                        LookError::new(
                            code::CL_ARG_PARSING_ERROR,
                            "Non-numeric limit argument given",
                        )
                    })?;
                    if n <= 0 {
                        return Err(LookError::new(
                            code::INCORRECT_PARAMS,
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
            code::CL_MUTUALLY_EXCLUSIVE_ARGS,
            "The '--transaction' (-t) and '--revision' (-r) arguments cannot co-exist",
        ));
    }
    if st.show_inherited_props && st.revprop {
        return Err(LookError::new(
            code::CL_MUTUALLY_EXCLUSIVE_ARGS,
            "Cannot use the '--show-inherited-props' option with the '--revprop' option",
        ));
    }
    let mut rest = positional.into_iter();
    let sub: &Sub = if help_asked {
        help_sub()
    } else {
        match rest.next() {
            None if version_asked => return version(out),
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
    svelto_look::run(sub.name, &st, &open, out)?;
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
    t.parse::<Revnum>().map_err(|_| {
        LookError::new(
            code::CL_ARG_PARSING_ERROR,
            "Invalid revision number supplied",
        )
    })
}

/// The repository at `path` as the composition root's backend opens it; with a
/// transaction name, that transaction as its youngest revision, and the transaction's
/// number. A cluster front end's directory of a repository is the cluster repository
/// (`crate::cluster::open_served`).
fn open(
    path: &std::path::Path,
    txn: Option<&str>,
) -> svelto_fs::Result<(Arc<dyn svelto_fs::ReadRepo>, Option<Revnum>)> {
    let (backend, env) = (crate::local_backend(), crate::system_env());
    // A cluster front end's directory of a repository (the REPOS its hooks are given).
    if !backend.is_repository(path) {
        if let Some(opened) = crate::cluster::open_served(path, txn, &env) {
            return opened;
        }
    }
    Ok(match txn {
        Some(name) => {
            let (repo, rev) = backend.open_txn(path, name, &env)?;
            (repo, Some(rev))
        }
        None => (backend.open(path, &env)?, None),
    })
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

fn version(out: &mut dyn Write) -> Result<u8> {
    writeln!(
        out,
        "svelto look, version {} (svnlook 1.14 compatible)",
        env!("CARGO_PKG_VERSION")
    )?;
    Ok(0)
}

fn help(out: &mut dyn Write, topics: Vec<String>) -> Result<u8> {
    if !topics.is_empty() {
        help::topics(out, &topics)?;
        return Ok(0);
    }
    writeln!(
        out,
        "general usage: {PROG} SUBCOMMAND REPOS_PATH [ARGS & OPTIONS ...]\n\
         Subversion repository inspection tool (svnlook's subcommands and output).\n\
         Type '{PROG} help <subcommand>' for help on a specific subcommand.\n\
         Type '{PROG} --version' to see the program version.\n\
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
