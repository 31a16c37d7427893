//! `svelto checkout`, `svelto export` and `svelto update`: the fast client (svelto-client) with the stock
//! client's options and output.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context};
use svelto_client::{Depth, Notify, Options};

#[derive(clap::Args)]
pub struct ClientArgs {
    /// The URL to check out (svn://, svn+ssh://, http:// or https://HOST[:PORT]/PATH).
    url: String,
    /// Where to put it (default: the URL's last segment).
    path: Option<PathBuf>,
    /// The revision (default: HEAD).
    #[arg(short = 'r', long = "revision")]
    revision: Option<String>,
    /// empty, files, immediates or infinity.
    #[arg(long)]
    depth: Option<String>,
    /// Print nothing but errors.
    #[arg(short, long)]
    quiet: bool,
    /// Do not fetch svn:externals.
    #[arg(long)]
    ignore_externals: bool,
    /// Take unversioned files and directories in the way as they are (checkout); export
    /// into an existing directory, overwriting its files.
    #[arg(long)]
    force: bool,
    #[arg(long)]
    username: Option<String>,
    #[arg(long)]
    password: Option<String>,
    /// Never prompt for a login.
    #[arg(long)]
    non_interactive: bool,
    /// Where the stock client's configuration and credential cache are (default
    /// ~/.subversion): logins cached in plain form under auth/svn.simple are used, and
    /// svn+NAME://'s tunnel agent is read from the [tunnels] section of its config file.
    #[arg(long, value_name = "DIR")]
    config_dir: Option<PathBuf>,
    /// https://: accept the server's certificate despite these failures (unknown-ca,
    /// cn-mismatch, expired, not-yet-valid, other). Svelto does not tell them apart yet:
    /// any value waives every check of the certificate.
    #[arg(long, value_name = "FAILURES")]
    trust_server_cert_failures: Option<String>,
}

#[derive(clap::Args)]
pub struct ExportArgs {
    #[command(flatten)]
    common: ClientArgs,
    /// What `svn:eol-style native` means: LF, CR or CRLF.
    #[arg(long)]
    native_eol: Option<String>,
}

/// The writer threads of a checkout, export or update: SVELTO_WRITERS (0: none, the session's
/// thread writes), else `default`: the library's for a checkout or export, none for an
/// update (where they did not win: bench/results/2026-11-29/client-writers.md).
fn writers(default: usize) -> anyhow::Result<usize> {
    match std::env::var("SVELTO_WRITERS") {
        Ok(v) => v
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|n| *n <= 64)
            .with_context(|| format!("SVELTO_WRITERS '{v}': a number of threads, 0 to 64")),
        Err(_) => Ok(default),
    }
}

fn options(a: &ClientArgs, native_eol: Option<&'static [u8]>) -> anyhow::Result<Options> {
    let (revision, date) = parse_revision(a.revision.as_deref())?;
    let (url, peg) = split_peg(&a.url)?;
    let depth =
        match a.depth.as_deref() {
            None => None,
            Some(d) => Some(Depth::parse(d).with_context(|| {
                format!("depth '{d}': one of empty, files, immediates, infinity")
            })?),
        };
    let path = match &a.path {
        Some(p) => p.clone(),
        None => {
            let last = url.trim_end_matches('/').rsplit('/').next().unwrap_or("");
            let name = String::from_utf8(svelto_client::url::decode(last))
                .unwrap_or_else(|_| last.to_string());
            if name.is_empty() || url.trim_end_matches('/').ends_with(':') {
                bail!("cannot tell a directory name from '{}': give PATH", a.url);
            }
            PathBuf::from(name)
        }
    };
    Ok(Options {
        url,
        path,
        revision,
        date,
        peg,
        depth,
        credentials: svelto_client::ra_svn::Credentials {
            username: a.username.clone(),
            password: a.password.clone(),
            trust_server_cert: a.trust_server_cert_failures.is_some(),
            ask: Some(ask(a.config_dir.clone(), a.non_interactive)),
            config_dir: a.config_dir.clone(),
        },
        native_eol,
        zone: crate::localtime::zone(),
        ignore_externals: a.ignore_externals,
        force: a.force,
        writers: writers(svelto_client::checkout::default_writers())?,
        use_commit_times: svelto_client::config::use_commit_times(a.config_dir.as_deref()),
    })
}

#[derive(clap::Args)]
pub struct UpdateArgs {
    /// The working copy's root (default: the current directory).
    path: Option<PathBuf>,
    /// The revision (default: HEAD).
    #[arg(short = 'r', long = "revision")]
    revision: Option<String>,
    /// Print nothing but errors.
    #[arg(short, long)]
    quiet: bool,
    /// Leave svn:externals as they are.
    #[arg(long)]
    ignore_externals: bool,
    #[arg(long)]
    username: Option<String>,
    #[arg(long)]
    password: Option<String>,
    /// Never prompt for a login.
    #[arg(long)]
    non_interactive: bool,
    /// Where the stock client's configuration and credential cache are (default
    /// ~/.subversion): logins cached in plain form under auth/svn.simple are used, and
    /// svn+NAME://'s tunnel agent is read from the [tunnels] section of its config file.
    #[arg(long, value_name = "DIR")]
    config_dir: Option<PathBuf>,
    /// https://: accept the server's certificate despite these failures (unknown-ca,
    /// cn-mismatch, expired, not-yet-valid, other). Svelto does not tell them apart yet:
    /// any value waives every check of the certificate.
    #[arg(long, value_name = "FAILURES")]
    trust_server_cert_failures: Option<String>,
}

/// Where a login comes from when the server wants one and none was given: the stock
/// client's cache in plain form, else (on a terminal, without --non-interactive) a prompt.
fn ask(config_dir: Option<PathBuf>, non_interactive: bool) -> svelto_client::ra_svn::Ask {
    let dir = config_dir.or_else(svelto_client::auth::default_config_dir);
    svelto_client::ra_svn::Ask(std::sync::Arc::new(move |realm, user| {
        use std::io::IsTerminal;
        if let Some(login) = dir
            .as_deref()
            .and_then(|d| svelto_client::auth::cached_login(d, realm, user))
        {
            return Some(login);
        }
        if non_interactive || !std::io::stdin().is_terminal() {
            return None;
        }
        let mut err = std::io::stderr();
        let _ = writeln!(err, "Authentication realm: {realm}");
        let user = match user {
            Some(u) => u.to_string(),
            None => {
                let _ = write!(err, "Username: ");
                let _ = err.flush();
                let mut line = String::new();
                std::io::stdin().read_line(&mut line).ok()?;
                line.trim_end_matches(['\n', '\r']).to_string()
            }
        };
        let password = rpassword::prompt_password(format!("Password for '{user}': ")).ok()?;
        Some((user, password))
    }))
}

/// A client error as its message alone: each names its cause already, so the chain that
/// `{:#}` prints would say it twice ("File exists (os error 17): File exists (os error 17)").
fn plain(e: svelto_client::Error) -> anyhow::Error {
    anyhow::anyhow!("{e}")
}

/// `-r`: (a number, or a date as an `svn:date`); both None for HEAD.
fn parse_revision(r: Option<&str>) -> anyhow::Result<(Option<u64>, Option<String>)> {
    Ok(match r {
        None => (None, None),
        Some(r) if r.eq_ignore_ascii_case("HEAD") => (None, None),
        Some(r) if r.starts_with('{') => {
            let date = svelto_client::date::to_svn_date(r, &crate::localtime::zone())
                .with_context(|| {
                    format!("revision '{r}': a date as svn reads it ({{2011-03-13}}, {{2011-03-13 10:10}}, {{2011-03-13T10:10:13Z}}, ...)")
                })?;
            (None, Some(date))
        }
        Some(r) => (
            Some(
                r.strip_prefix('r')
                    .unwrap_or(r)
                    .parse::<u64>()
                    .with_context(|| format!("revision '{r}': a number, {{DATE}} or HEAD"))?,
            ),
            None,
        ),
    })
}

/// `URL@PEG`: the URL and its peg revision (a number or HEAD), as svn splits them (at the
/// last `@` of the last segment; `URL@` keeps an `@` that belongs to the name).
fn split_peg(url: &str) -> anyhow::Result<(String, Option<u64>)> {
    let last = url.rfind('/').map_or(0, |i| i + 1);
    let Some(at) = url[last..].rfind('@').map(|i| last + i) else {
        return Ok((url.to_string(), None));
    };
    let (base, peg) = (&url[..at], &url[at + 1..]);
    if peg.is_empty() || peg.eq_ignore_ascii_case("HEAD") {
        return Ok((base.to_string(), None));
    }
    let n = peg
        .strip_prefix('r')
        .unwrap_or(peg)
        .parse::<u64>()
        .with_context(|| format!("peg revision '{peg}' of '{url}': a number or HEAD"))?;
    Ok((base.to_string(), Some(n)))
}

/// `svelto update`: prints what `svn update` prints (`Updating 'PATH':`, `A`/`D`/`U`
/// lines, `Updated to revision N.`).
pub fn update(a: UpdateArgs) -> anyhow::Result<()> {
    let path = a.path.clone().unwrap_or_else(|| PathBuf::from("."));
    let revision = parse_revision(a.revision.as_deref())?;
    let opts = svelto_client::UpdateOptions {
        path: path.clone(),
        revision: revision.0,
        date: revision.1,
        credentials: svelto_client::ra_svn::Credentials {
            username: a.username.clone(),
            password: a.password.clone(),
            trust_server_cert: a.trust_server_cert_failures.is_some(),
            ask: Some(ask(a.config_dir.clone(), a.non_interactive)),
            config_dir: a.config_dir.clone(),
        },
        zone: crate::localtime::zone(),
        ignore_externals: a.ignore_externals,
        switch_url: None,
        writers: writers(0)?,
        use_commit_times: svelto_client::config::use_commit_times(a.config_dir.as_deref()),
    };
    run_update(&opts, a.quiet, false, true)
}

/// Updates as `svn update` prints it; `checked_out`: the revision line of a checkout that
/// became an update (`Checked out revision N.`, no `Updating` header).
fn run_update(
    opts: &svelto_client::UpdateOptions,
    quiet: bool,
    checked_out: bool,
    note_externals: bool,
) -> anyhow::Result<()> {
    let path = opts.path.clone();
    let mut out = std::io::BufWriter::new(std::io::stdout());
    if !quiet && !checked_out {
        let _ = writeln!(out, "Updating '{}':", path.display());
    }
    // As svn's notifier: whether something changed since the last "... revision N." line
    // (an external's, or the tree's), and how deep inside externals the lines are.
    let mut changed = false;
    let mut in_external = 0usize;
    let summary = {
        let mut notify = |n: Notify| {
            // As svn shows them: below PATH, without a leading "./".
            let shown = |relpath: &str| match (path == std::path::Path::new("."), relpath) {
                (true, "") => ".".to_string(),
                (true, r) => r.to_string(),
                (false, "") => path.display().to_string(),
                (false, r) => path.join(r).display().to_string(),
            };
            let line = match n {
                Notify::Added { relpath, .. } => format!("A    {}", shown(relpath)),
                Notify::Deleted { relpath } => format!("D    {}", shown(relpath)),
                Notify::Updated {
                    relpath,
                    text,
                    props,
                } => format!(
                    "{}{}   {}",
                    if text { 'U' } else { ' ' },
                    if props { 'U' } else { ' ' },
                    shown(relpath)
                ),
                Notify::Existed { relpath, .. } => format!("E    {}", shown(relpath)),
                // (as svn's notifier: a conflict or a restore alone is no change)
                Notify::TreeConflict { relpath } => {
                    if !quiet {
                        let _ = writeln!(out, "   C {}", shown(relpath));
                    }
                    return;
                }
                Notify::Restored { relpath } => {
                    if !quiet {
                        let _ = writeln!(out, "Restored '{}'", shown(relpath));
                    }
                    return;
                }
                Notify::ShadowedAdd { relpath } => format!("   A {}", shown(relpath)),
                Notify::ExternalRemoved { relpath, message } => match message {
                    Some(m) => format!("Removed external '{}': {m}", shown(relpath)),
                    None => format!("Removed external '{}'", shown(relpath)),
                },
                Notify::External { relpath } => {
                    in_external += 1;
                    if !quiet {
                        let _ =
                            writeln!(out, "\nFetching external item into '{}':", shown(relpath));
                    }
                    return;
                }
                Notify::ExternalDone { revision } => {
                    in_external = in_external.saturating_sub(1);
                    if !quiet {
                        let _ = match revision {
                            Some(r) if checked_out => {
                                writeln!(out, "Checked out external at revision {r}.\n")
                            }
                            Some(r) if std::mem::take(&mut changed) => {
                                writeln!(out, "Updated external to revision {r}.\n")
                            }
                            Some(r) => writeln!(out, "External at revision {r}.\n"),
                            None if checked_out => writeln!(out, "External checkout complete.\n"),
                            None => writeln!(out, "External update complete.\n"),
                        };
                    }
                    return;
                }
                Notify::ExternalFailed { relpath, message } => {
                    let _ = out.flush();
                    let _ = writeln!(
                        std::io::stderr(),
                        "svelto: warning: W205011: Error handling externals definition for '{}':\n\
                         svelto: warning: {message}",
                        shown(relpath)
                    );
                    if in_external > 0 {
                        in_external -= 1;
                        if !quiet {
                            let _ = writeln!(out);
                        }
                    }
                    return;
                }
                Notify::Received { .. } => return,
            };
            changed = true;
            if !quiet {
                let _ = writeln!(out, "{line}");
            }
        };
        svelto_client::update(opts, &mut notify).map_err(plain)?
    };
    out.flush()?;
    if note_externals {
        externals_note(&summary.externals, &path);
    }
    if !quiet {
        if checked_out {
            let _ = writeln!(out, "Checked out revision {}.", summary.revision);
        } else if changed {
            let _ = writeln!(out, "Updated to revision {}.", summary.revision);
        } else {
            let _ = writeln!(out, "At revision {}.", summary.revision);
        }
        // As `svn update` (its checkout prints no summary).
        if summary.tree_conflicts > 0 && !checked_out {
            let _ = writeln!(
                out,
                "Summary of conflicts:\n  Tree conflicts: {}",
                summary.tree_conflicts
            );
        }
    }
    out.flush()?;
    externals_result(&summary)
}

/// Prints `A    PATH` per node, as the stock client does (nothing with `-q`). When
/// standard output and standard error are terminals, a progress line on standard error
/// (indicatif: nodes added, bytes received, time) stays below the `A` lines until the end.
struct Printer {
    quiet: bool,
    root: PathBuf,
    /// "Checked out" or "Exported", for the line that ends an external.
    done: &'static str,
    /// Inside an external's lines (a failure then ends them with a blank line, as in svn).
    in_external: bool,
    out: std::io::BufWriter<std::io::Stdout>,
    bar: Option<indicatif::ProgressBar>,
}

impl Printer {
    fn new(quiet: bool, root: PathBuf, done: &'static str) -> Printer {
        use std::io::IsTerminal;
        let bar = (!quiet && std::io::stdout().is_terminal() && std::io::stderr().is_terminal())
            .then(|| {
                let bar = indicatif::ProgressBar::with_draw_target(
                    None,
                    indicatif::ProgressDrawTarget::stderr(),
                );
                if let Ok(style) = indicatif::ProgressStyle::with_template(
                    "{spinner} {pos} files and directories, {msg}{elapsed}",
                ) {
                    bar.set_style(style);
                }
                bar
            });
        Printer {
            quiet,
            root,
            done,
            in_external: false,
            out: std::io::BufWriter::new(std::io::stdout()),
            bar,
        }
    }

    /// A path below the root as svn shows it (the root itself without a trailing `/`).
    fn shown(&self, relpath: &str) -> String {
        if relpath.is_empty() {
            self.root.display().to_string()
        } else {
            self.root.join(relpath).display().to_string()
        }
    }

    fn line(&mut self, line: &str, count: bool) {
        match &self.bar {
            Some(bar) => {
                if count {
                    bar.inc(1);
                }
                bar.println(line);
            }
            None if !self.quiet => {
                let _ = writeln!(self.out, "{line}");
            }
            None => {}
        }
    }

    fn notify(&mut self, n: Notify) {
        match n {
            // (-q without a bar: nothing to show, nothing to format)
            Notify::Added { .. } | Notify::Updated { .. } if self.quiet && self.bar.is_none() => {}
            Notify::Added { relpath, .. } => {
                let line = format!("A    {}", self.shown(relpath));
                self.line(&line, true);
            }
            Notify::Received { bytes } => {
                if let Some(bar) = &self.bar {
                    bar.set_message(format!("{} received, ", indicatif::HumanBytes(bytes)));
                }
            }
            Notify::Updated {
                relpath,
                text,
                props,
            } => {
                let line = format!(
                    "{}{}   {}",
                    if text { 'U' } else { ' ' },
                    if props { 'U' } else { ' ' },
                    self.shown(relpath)
                );
                self.line(&line, false);
            }
            Notify::External { relpath } => {
                self.in_external = true;
                let line = format!("\nFetching external item into '{}':", self.shown(relpath));
                self.line(&line, false);
            }
            Notify::ExternalDone { revision } => {
                self.in_external = false;
                let line = match revision {
                    Some(r) => format!("{} external at revision {r}.\n", self.done),
                    None if self.done == "Exported" => "External export complete.\n".into(),
                    None => "External checkout complete.\n".into(),
                };
                self.line(&line, false);
            }
            Notify::ExternalFailed { relpath, message } => {
                let _ = self.out.flush();
                let _ = writeln!(
                    std::io::stderr(),
                    "svelto: warning: W205011: Error handling externals definition for '{}':\n\
                     svelto: warning: {message}",
                    self.shown(relpath)
                );
                if std::mem::take(&mut self.in_external) {
                    self.line("", false);
                }
            }
            Notify::Existed { relpath, .. } => {
                let line = format!("E    {}", self.shown(relpath));
                self.line(&line, true);
            }
            Notify::TreeConflict { relpath } => {
                let line = format!("   C {}", self.shown(relpath));
                self.line(&line, true);
            }
            Notify::ShadowedAdd { relpath } => {
                let line = format!("   A {}", self.shown(relpath));
                self.line(&line, true);
            }
            Notify::Deleted { .. } | Notify::ExternalRemoved { .. } | Notify::Restored { .. } => {}
        }
    }
}

impl Drop for Printer {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        let _ = self.out.flush();
    }
}

fn externals_note(ext: &[String], root: &std::path::Path) {
    for dir in ext {
        let _ = writeln!(
            std::io::stderr(),
            "svelto: svn:externals on '{}' were not fetched; 'svn update {}' fetches them",
            root.join(dir).display(),
            root.display()
        );
    }
}

/// After a checkout or export: a failure when an external definition failed (each was
/// warned of), as the stock client's exit status says.
fn externals_result(summary: &svelto_client::Summary) -> anyhow::Result<()> {
    if summary.externals_failed {
        bail!("E205011: Failure occurred processing one or more externals definitions");
    }
    Ok(())
}

pub fn checkout(a: ClientArgs) -> anyhow::Result<()> {
    let opts = options(&a, None)?;
    // Into a working copy of the same URL: an update, as with svn; unless it is a Svelto
    // checkout that was interrupted, which this one resumes.
    let url = svelto_client::update::wc_url(&opts.path).map_err(plain)?;
    let resumes = url.is_some()
        && svelto_client::checkout::unfinished_checkout(&opts.path)
            .map_err(plain)?
            .is_some();
    if let Some(url) = &url {
        let same = |u: &str| u.trim_end_matches('/').to_string();
        if same(url) != same(&opts.url) {
            let abs = std::path::absolute(&opts.path).unwrap_or_else(|_| opts.path.clone());
            bail!(
                "'{}' is already a working copy for a different URL",
                abs.display()
            );
        }
    }
    if url.is_some() && !resumes {
        let up = svelto_client::UpdateOptions {
            path: opts.path.clone(),
            revision: opts.revision.or(opts.peg),
            date: opts.date.clone(),
            credentials: opts.credentials.clone(),
            zone: opts.zone.clone(),
            ignore_externals: opts.ignore_externals,
            switch_url: None,
            writers: writers(0)?,
            use_commit_times: opts.use_commit_times,
        };
        return run_update(&up, a.quiet, true, !a.ignore_externals);
    }
    let mut printer = Printer::new(a.quiet, opts.path.clone(), "Checked out");
    let summary = svelto_client::checkout(&opts, &mut |n| printer.notify(n)).map_err(plain)?;
    drop(printer);
    if !a.quiet {
        println!("Checked out revision {}.", summary.revision);
    }
    externals_result(&summary)
}

pub fn export(a: ExportArgs) -> anyhow::Result<()> {
    let native_eol: Option<&'static [u8]> = match a.native_eol.as_deref() {
        None => None,
        Some("LF") => Some(b"\n"),
        Some("CRLF") => Some(b"\r\n"),
        Some("CR") => Some(b"\r"),
        Some(other) => bail!("--native-eol '{other}': one of LF, CR, CRLF"),
    };
    let opts = options(&a.common, native_eol)?;
    let mut printer = Printer::new(a.common.quiet, opts.path.clone(), "Exported");
    let summary = svelto_client::export(&opts, &mut |n| printer.notify(n)).map_err(plain)?;
    drop(printer);
    if !a.common.quiet {
        println!("Exported revision {}.", summary.revision);
    }
    externals_result(&summary)
}
