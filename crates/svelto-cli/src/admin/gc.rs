//! `svelto admin gc --cluster FILE NAME`: one pass of the cluster's orphan collector over
//! repository NAME (docs/cluster.md, "Orphans"). svnadmin has no such command (a local
//! repository leaves no orphans: a failed commit's transaction is named and removed by
//! `rmtxns`); `gc` is the name git and most object stores' tools give the same job, and it
//! is not in the subcommand list, which is svnadmin's.

use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;
use svelto_cluster::GcSettings;

use super::{cluster_name, env};

#[derive(Args)]
pub struct GcArgs {
    /// The repository's name in the cluster.
    pub repo: PathBuf,
    /// The cluster file (docs/cluster.md, "Front ends").
    #[arg(long, value_name = "FILE")]
    pub cluster: PathBuf,
    /// Delete nothing younger than this (default: the cluster file's `gc-min-age`, else
    /// 3600).
    #[arg(long, value_name = "SECONDS")]
    pub min_age: Option<u64>,
    /// Delete a forwarded commit's staged texts (`txn/COMMITID/`) once this old (default:
    /// the cluster file's `txn-max-age`, else 86400).
    #[arg(long, value_name = "SECONDS")]
    pub txn_max_age: Option<u64>,
}

/// Runs one pass; prints each object deleted (`deleted KEY BYTES`), then a summary line.
pub fn run(args: GcArgs) -> Result<()> {
    let name = cluster_name(&args.repo)?;
    let config = crate::cluster::config(&args.cluster)?;
    let settings = GcSettings {
        min_age: args
            .min_age
            .map(Duration::from_secs)
            .unwrap_or(config.gc.min_age),
        txn_max_age: args
            .txn_max_age
            .map(Duration::from_secs)
            .unwrap_or(config.gc.txn_max_age),
    };
    let cluster = svelto_cluster::Cluster::connect(config.cluster)
        .with_context(|| format!("connecting to the cluster of '{}'", args.cluster.display()))?;
    let repo = cluster.repository(name);
    let date = env().svn_date();
    let Some(now) = svelto_core::parse_svn_date(&date) else {
        bail!("the clock's date '{date}' cannot be read");
    };
    let done = repo
        .collect(now, settings)
        .with_context(|| format!("collecting the orphans of repository '{name}'"))?;
    print!("{}", report(name, &done));
    Ok(())
}

/// The lines `svelto admin gc` prints and `svelto serve` logs for a pass.
pub fn report(name: &str, done: &svelto_cluster::Collected) -> String {
    let mut out = String::new();
    for (key, bytes) in done.deleted.iter().chain(&done.txn_deleted) {
        out.push_str(&format!("deleted {key} {bytes}\n"));
    }
    for key in &done.uploads_ended {
        out.push_str(&format!("ended upload {key}\n"));
    }
    for key in &done.unrecognised {
        out.push_str(&format!(
            "left alone (not a name the cluster writes): {key}\n"
        ));
    }
    let (objects, bytes) = done.totals();
    out.push_str(&format!(
        "{name}: r{}: {} segments listed; deleted {objects} objects, {bytes} bytes; kept {} \
         younger than the minimum age, {} of the youngest revision or beyond\n",
        done.youngest, done.segments_listed, done.kept_young, done.kept_unsettled
    ));
    out
}
