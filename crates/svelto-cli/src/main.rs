//! The `svelto` binary: `svelto admin` (like svnadmin), `svelto serve` (like svnserve, and
//! like Apache's mod_dav_svn over http:// and https://) and `svelto look` (like svnlook).

mod admin;
mod checks;
mod client;
mod cluster;
mod localtime;
mod look;
mod manual;
mod serve;

use clap::{CommandFactory, FromArgMatches, Subcommand};

/// mimalloc instead of glibc's malloc: the server's log and drive paths allocate many small
/// items; glibc's malloc/free were a third of `log -v`'s server CPU.
/// Built without transparent huge pages (`no_thp`): with them each connection thread's heap
/// pages were backed by 2 MiB pages, about 1.5 MB of memory per idle connection; without,
/// about 130 KiB (docs/reliability.md). On a system whose THP setting is `always`, set
/// `MIMALLOC_ALLOW_THP=0` in the server's environment to get the same.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Gives back to the system the free memory mimalloc keeps for the calling thread, as a
/// connection's thread ends (`svelto_host::HostConfig::release_thread_memory`): an ended
/// thread's pages are otherwise kept until another thread happens to reuse them.
pub(crate) fn release_thread_memory() {
    // SAFETY: mi_collect takes no pointer and only walks the allocator's own structures
    // (for the calling thread and the abandoned ones); it may be called at any time.
    #[allow(unsafe_code)]
    unsafe {
        libmimalloc_sys::mi_collect(true);
    }
}

/// mimalloc's `mi_option_purge_delay` (its option enum's 16th member in mimalloc v2 and
/// v3; libmimalloc-sys names no constant for it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Makes mimalloc give freed pages back at once instead of up to a second later, for the
/// bulk `svelto admin` commands: with the delay, `admin load`'s peak resident memory on
/// one history varied from 31 to 46 MiB from run to run (pages freed but not yet given
/// back counted, so the peak followed the machine's timing); without, 27-29 MiB
/// (tests/admin/memory.rs's history, 2026-11-30). `MIMALLOC_PURGE_DELAY` in the
/// environment is left to rule.
fn purge_freed_memory_at_once() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
        return;
    }
    // SAFETY: mi_option_set only stores the value in mimalloc's option table; it takes
    // no pointer and may be called at any time.
    #[allow(unsafe_code)]
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0);
    }
}
use std::process::ExitCode;

/// What `svelto --help` and svelto(1) say the program is.
const ABOUT: &str = "A Subversion-compatible repository server. One process serves svn:// \
(svnserve's protocol, flags and conf/svnserve.conf) and, with --http-listen, http:// and \
https:// (Subversion's HTTP protocol as Apache's mod_dav_svn speaks it); sshd runs it for \
svn+ssh:// (svelto serve -t). The stock svn client, svnsync and svnrdump work unchanged. \
svelto admin and svelto look are svnadmin and svnlook for its repositories.";

#[derive(clap::Parser)]
#[command(
    name = "svelto",
    version,
    about = "A Subversion-compatible repository server for svn://, svn+ssh://, http:// and https://",
    long_about = ABOUT,
    after_help = "Start with `svelto admin create DIR/NAME` and `svelto serve -d -r DIR \
                  --http-listen 0.0.0.0:8080`; README.md and docs/ say the rest \
                  (/usr/share/doc/svelto/ where the Debian package is installed)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Repository administration, with svnadmin's contracts.
    Admin {
        #[command(subcommand)]
        command: admin::AdminCommand,
    },
    /// Serve repositories over svn://, http:// and https://, and svn+ssh:// with -t
    /// (svnserve's flags, Apache's URLs).
    #[command(long_about = SERVE_ABOUT)]
    Serve(Box<serve::ServeArgs>),
    /// Inspect a revision or transaction, with svnlook's subcommands and output
    /// (`svelto look help`).
    Look {
        #[arg(allow_hyphen_values = true, trailing_var_arg = true)]
        args: Vec<std::ffi::OsString>,
    },
    /// Check out a working copy the stock svn 1.14 works on, fast (svn://, http://, https://).
    Checkout(client::ClientArgs),
    /// Export a tree from a repository (svn://, http://, https://).
    Export(client::ExportArgs),
    /// Bring a working copy without local changes to a revision (svn://, http://, https://).
    Update(client::UpdateArgs),
    /// Write the manual pages and shell completions under DIR (for packagers).
    #[command(hide = true)]
    GenerateAssets { dir: std::path::PathBuf },
}

/// What `svelto serve --help` and svelto-serve(1) say the subcommand does.
const SERVE_ABOUT: &str = "Serve the repositories under ROOT (-r). svn:// on --listen-host and \
--listen-port (3690), with svnserve's modes (-d, -i, -t, -X) and flags; svn+ssh:// is tunnel \
mode (-t), which sshd runs for each login. http:// on --http-listen ADDR:PORT, and https:// \
with --http-tls-cert and --http-tls-key added: URLs as Apache's SVNParentPath ROOT under \
<Location --http-prefix>. Access rules are each repository's conf/svnserve.conf, passwd \
and authz, as with svnserve; over HTTP the logins are Basic, as Apache's (--http-auth-file).";

/// What `svelto --version` and `svelto serve --version` print after the program's name: the
/// version, the commit it was built from, the storage format and the protocols served.
pub fn version_text() -> String {
    format!(
        "{} (commit {})\n   storage format: {}\n   protocols: svn:// (ra_svn protocol 2), \
         svn+ssh:// (tunnel mode, -t), http:// and https:// (HTTP protocol v2, \
         --http-listen)",
        env!("CARGO_PKG_VERSION"),
        env!("SVELTO_COMMIT"),
        svelto_store::FORMAT.trim_end(),
    )
}

/// The storage backend of the repositories `admin` and `look` name by their directory on
/// this machine: the local engine (the composition root's choice; `serve --cluster` and
/// `admin dump`/`load --cluster` open the cluster's).
pub fn local_backend() -> &'static dyn svelto_fs::Backend {
    &svelto_store::LocalBackend
}

/// Where the libraries the binary drives take the time and fresh names from: the system.
pub fn system_env() -> std::sync::Arc<dyn svelto_core::Env> {
    std::sync::Arc::new(svelto_core::SystemEnv)
}

fn main() -> ExitCode {
    // `look` parses its arguments itself, as svnlook does (usage errors must match).
    let mut argv = std::env::args_os();
    let _ = argv.next();
    let first = argv.next();
    if first.as_deref() == Some(std::ffi::OsStr::new("look")) {
        return look::main(argv.collect());
    }
    // `admin` reports usage errors and failures in svnadmin's words and codes.
    if first.as_deref() == Some(std::ffi::OsStr::new("admin")) {
        purge_freed_memory_at_once();
        return admin::main(argv.collect());
    }
    let matches = Cli::command()
        .long_version(&*Box::leak(version_text().into_boxed_str()))
        .get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let result = match cli.command {
        Command::Admin { command } => admin::run(command),
        Command::Serve(args) => serve::run(*args),
        Command::Look { args } => return look::main(args),
        Command::Checkout(args) => client::checkout(args),
        Command::Export(args) => client::export(args),
        Command::Update(args) => client::update(args),
        Command::GenerateAssets { dir } => manual::generate(&dir).map_err(Into::into),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Not eprintln!: a detached `serve -d` child may have lost its standard error,
            // and a failed write must not turn an error exit into a panic.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "{}", error_line(&format!("{e:#}")));
            ExitCode::FAILURE
        }
    }
}

/// The line an error exit prints: `svelto: E170001: Authorization failed` for an error with
/// Subversion's code (as `svn:`, `svnadmin:` print theirs), `svelto: error: MESSAGE` for
/// the rest.
fn error_line(message: &str) -> String {
    let coded = message.len() > 8
        && message.as_bytes()[0] == b'E'
        && message.as_bytes()[1..7].iter().all(u8::is_ascii_digit)
        && message.as_bytes()[7] == b':';
    if coded {
        format!("svelto: {message}")
    } else {
        format!("svelto: error: {message}")
    }
}

#[cfg(test)]
mod tests {
    use super::error_line;

    #[test]
    fn coded_errors_print_as_subversions_tools_print_them() {
        assert_eq!(
            error_line("E170001: Authorization failed"),
            "svelto: E170001: Authorization failed"
        );
        assert_eq!(error_line("no such file"), "svelto: error: no such file");
        assert_eq!(error_line("E17: short"), "svelto: error: E17: short");
        assert_eq!(
            error_line("E1700012: seven"),
            "svelto: error: E1700012: seven"
        );
    }
}
