//! `svelto admin hotcopy` and `freeze`: the backup tools (svnadmin's contracts).

use anyhow::{Context, Result};
use clap::Args;
use std::ffi::OsString;
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::Command;

use super::{admin_error, arg_error, env, local, svn_error};
use svelto_core::code;

#[derive(Args)]
pub struct HotcopyArgs {
    pub repo: PathBuf,
    /// Where the copy goes (NEW_REPOS_PATH).
    #[arg(value_name = "NEW_PATH")]
    pub new_repo: Option<PathBuf>,
    /// Copy only what the destination (an earlier copy) lacks.
    #[arg(long)]
    pub incremental: bool,
    /// Accepted for svnadmin's scripts (Berkeley DB only: nothing to clean).
    #[arg(long)]
    pub clean_logs: bool,
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn run(args: HotcopyArgs) -> Result<()> {
    let Some(new_repo) = &args.new_repo else {
        return Err(arg_error(
            code::CL_INSUFFICIENT_ARGS,
            "Not enough arguments",
        ));
    };
    let youngest = super::open(&args.repo)?.youngest();
    let bar = super::progress::Progress::revisions("hotcopy", 0, youngest, args.quiet);
    svelto_admin::hotcopy(
        local(),
        &env(),
        &args.repo,
        new_repo,
        args.incremental,
        args.quiet,
        &mut super::progress::Above(&bar, std::io::stdout().lock()),
        &mut |rev| bar.revision(rev),
    )
    .map_err(admin_error)?;
    bar.finish();
    Ok(())
}

#[derive(Args)]
pub struct FreezeArgs {
    /// The repository (svnadmin's form: then the program and its arguments).
    pub repos: Vec<PathBuf>,
    /// After `--`: the program and its arguments.
    #[arg(last = true)]
    pub program: Vec<OsString>,
    /// Read the repository paths from FILE, one a line.
    #[arg(short = 'F', long = "file", value_name = "FILE")]
    pub file: Option<PathBuf>,
}

/// `freeze REPO -- PROGRAM [ARG...]` or `freeze -F FILE -- PROGRAM [ARG...]`: runs the
/// program with the repositories' writes held and exits with its exit code (svnadmin).
/// Several repositories before `--` are all frozen when each is a repository; otherwise,
/// as with svnadmin, the words after the first are the program.
pub fn freeze(args: FreezeArgs) -> Result<()> {
    let FreezeArgs {
        repos,
        program,
        file,
    } = args;
    let words = |v: &[PathBuf]| -> Vec<OsString> { v.iter().map(|p| p.clone().into()).collect() };
    let (paths, program): (Vec<PathBuf>, Vec<OsString>) = match file {
        Some(f) => {
            let text = std::fs::read_to_string(&f)
                .with_context(|| format!("Can't open file '{}'", f.display()))?;
            let paths = text
                .split(['\r', '\n'])
                .filter(|l| !l.is_empty())
                .map(PathBuf::from)
                .collect();
            (paths, [words(&repos), program].concat())
        }
        // `freeze -- REPO PROGRAM [ARG...]`: svnadmin takes the first word after `--` as
        // the repository.
        None if repos.is_empty() && program.len() > 1 => {
            (vec![PathBuf::from(&program[0])], program[1..].to_vec())
        }
        None => {
            let Some(first) = repos.first() else {
                return Err(svn_error(
                    code::CL_ARG_PARSING_ERROR,
                    "Repository argument required",
                ));
            };
            if !program.is_empty()
                && repos.len() > 1
                && repos.iter().all(|r| local().is_repository(r))
            {
                (repos, program)
            } else {
                (vec![first.clone()], [words(&repos[1..]), program].concat())
            }
        }
    };
    let Some((name, rest)) = program.split_first() else {
        return Err(arg_error(code::CL_ARG_PARSING_ERROR, "No program provided"));
    };
    let status = svelto_repos::freeze(local(), &paths, || Command::new(name).args(rest).status())?;
    let code = match status {
        Ok(s) => match (s.code(), s.signal()) {
            (Some(code), _) => code,
            (None, sig) => {
                return Err(svn_error(
                    code::EXTERNAL_PROGRAM,
                    format!(
                        "Process '{}' failed (signal {})",
                        name.to_string_lossy(),
                        sig.unwrap_or(0)
                    ),
                ))
            }
        },
        Err(e) => {
            // svnadmin's child reports this itself (APR's words, no "svnadmin:" prefix).
            let text = e.to_string();
            let text = text.split(" (os error").next().unwrap_or(&text);
            let _ = write!(
                std::io::stderr(),
                "exec of '{}' failed: {text}",
                name.to_string_lossy()
            );
            255
        }
    };
    if code != 0 {
        let _ = std::io::stdout().flush();
        std::process::exit(code);
    }
    Ok(())
}
