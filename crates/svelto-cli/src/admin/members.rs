//! `svelto admin members --cluster FILE`: the front ends of a cluster present now (its
//! member registry, docs/cluster.md).

use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct MembersArgs {
    /// The cluster file (docs/cluster.md, "Front ends").
    #[arg(long, value_name = "FILE")]
    pub cluster: PathBuf,
}

/// Prints `ID VALUE` a line (the value: the front end's addresses and pid), by id.
pub fn run(args: MembersArgs) -> Result<()> {
    let config = crate::cluster::config(&args.cluster)?;
    let cluster = svelto_cluster::Cluster::connect(config.cluster)
        .with_context(|| format!("connecting to the cluster of '{}'", args.cluster.display()))?;
    let members = cluster
        .members()
        .context("reading the cluster's member registry")?;
    let mut out = String::new();
    for (id, value) in members {
        out.push_str(&format!("{id} {value}\n"));
    }
    print!("{out}");
    Ok(())
}
