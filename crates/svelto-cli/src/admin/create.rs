//! `svelto admin create REPO`.

use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct CreateArgs {
    pub repo: PathBuf,
}

pub fn run(args: CreateArgs) -> Result<()> {
    let CreateArgs { repo } = args;
    let uuid = uuid::Uuid::new_v4().to_string();
    svelto_repos::create(&repo, &uuid, &svelto_core::svn_date_now())
        .with_context(|| format!("creating repository '{}'", repo.display()))
}
