//! The `svelto` binary: `svelto admin` (like svnadmin) and `svelto serve` (like svnserve);
//! `look` comes later.

mod admin;
mod serve;

use clap::{Parser, Subcommand};

/// mimalloc instead of glibc's malloc: the server's log and drive paths allocate many small
/// items; glibc's malloc/free were a third of `log -v`'s server CPU (issue 3's note).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "svelto",
    version,
    about = "A Subversion-compatible repository server"
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
    /// Serve repositories over svn:// (svnserve's flags).
    Serve(Box<serve::ServeArgs>),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Admin { command } => admin::run(command),
        Command::Serve(args) => serve::run(*args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Not eprintln!: a detached `serve -d` child may have lost its standard error,
            // and a failed write must not turn an error exit into a panic.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "svelto: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
