//! `svelto admin setuuid REPOS_PATH [NEW_UUID]`: the repository's UUID, checked as
//! svnadmin checks it (E125008 for a malformed one); a new random UUID without NEW_UUID.

use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

use super::open;

#[derive(Args)]
pub struct SetuuidArgs {
    #[arg(value_name = "REPOS_PATH")]
    pub repo: PathBuf,
    #[arg(value_name = "NEW_UUID")]
    pub uuid: Option<String>,
}

pub fn run(args: SetuuidArgs) -> Result<()> {
    open(&args.repo)?;
    let uuid = args
        .uuid
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    svelto_repos::maintenance::set_uuid(&mut *super::open_writer(&args.repo)?, &uuid)?;
    Ok(())
}
