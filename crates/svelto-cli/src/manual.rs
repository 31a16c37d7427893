//! The manual pages and shell completions, generated from the same clap definitions that
//! parse the command line, so they never drift from the flags: `svelto generate-assets DIR`
//! (hidden; `scripts/package` runs it) writes `DIR/man/svelto*.1` and
//! `DIR/completions/{svelto.bash,_svelto,svelto.fish}`.

use clap::{Command, CommandFactory};
use clap_complete::Shell;
use std::fs;
use std::io;
use std::path::Path;

/// `svelto` with its subcommands as they parse (`look` from svnlook's option table).
fn full_command() -> Command {
    crate::Cli::command()
        .mut_subcommand("admin", |_| {
            crate::admin::command()
                .name("admin")
                .bin_name("svelto admin")
        })
        .mut_subcommand("look", |_| {
            crate::look::command().name("look").bin_name("svelto look")
        })
}

/// One page per program and per subcommand, named as the pages that list them refer to
/// them: `svelto`, `svelto-serve`, `svelto-admin`, `svelto-admin-hotcopy`, `svelto-look`,
/// `svelto-look-changed`...
fn pages() -> Vec<(String, Command)> {
    let mut pages = Vec::new();
    collect("svelto", "svelto", full_command(), &mut pages);
    pages
}

fn collect(name: &str, bin: &str, cmd: Command, pages: &mut Vec<(String, Command)>) {
    let subs: Vec<Command> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .cloned()
        .collect();
    let page = cmd
        .name(name.to_string())
        .bin_name(bin.to_string())
        .version(env!("CARGO_PKG_VERSION"))
        .disable_version_flag(true)
        // clap's own `help` subcommand gets no page: the pages are the help.
        .disable_help_subcommand(true);
    pages.push((name.to_string(), page));
    for sub in subs {
        let sub_name = sub.get_name().to_string();
        collect(
            &format!("{name}-{sub_name}"),
            &format!("{bin} {sub_name}"),
            sub,
            pages,
        );
    }
}

/// Writes the manual pages and completions under `dir`.
pub fn generate(dir: &Path) -> io::Result<()> {
    let man = dir.join("man");
    fs::create_dir_all(&man)?;
    for (name, page) in pages() {
        let mut out = Vec::new();
        clap_mangen::Man::new(page).render(&mut out)?;
        fs::write(man.join(format!("{name}.1")), out)?;
    }
    let completions = dir.join("completions");
    fs::create_dir_all(&completions)?;
    for (shell, file) in [
        (Shell::Bash, "svelto.bash"),
        (Shell::Zsh, "_svelto"),
        (Shell::Fish, "svelto.fish"),
    ] {
        let mut out = Vec::new();
        clap_complete::generate(shell, &mut full_command(), "svelto", &mut out);
        fs::write(completions.join(file), out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMES: [&str; 4] = ["svn://", "svn+ssh://", "http://", "https://"];

    fn names_every_scheme(what: &str, text: &str) {
        for scheme in SCHEMES {
            assert!(
                text.contains(scheme),
                "{what} does not name {scheme}:\n{text}"
            );
        }
    }

    /// `svelto --help`, `svelto serve --help`, `--version` and the two manual pages a new
    /// administrator opens first name all four URL schemes; no flag of `svelto serve`
    /// shows up with an empty description.
    #[test]
    fn help_texts_name_every_url_scheme_and_every_flag_has_help() {
        let mut cli = full_command();
        names_every_scheme("svelto --help", &cli.render_long_help().to_string());
        names_every_scheme("svelto -h", &cli.render_help().to_string());
        names_every_scheme("svelto --version", &crate::version_text());
        let mut serve = cli.find_subcommand_mut("serve").expect("serve").clone();
        names_every_scheme("svelto serve --help", &serve.render_long_help().to_string());
        let blank: Vec<String> = serve
            .get_arguments()
            .filter(|a| !a.is_hide_set())
            .filter(|a| a.get_help().is_none_or(|h| h.to_string().trim().is_empty()))
            .map(|a| a.get_id().to_string())
            .collect();
        assert!(blank.is_empty(), "serve flags without help: {blank:?}");

        let dir = tempfile::tempdir().expect("tempdir");
        generate(dir.path()).expect("generate");
        for page in ["svelto", "svelto-serve"] {
            let text =
                fs::read_to_string(dir.path().join("man").join(format!("{page}.1"))).expect("page");
            names_every_scheme(&format!("{page}(1)"), &text);
        }
    }

    #[test]
    fn every_program_gets_a_page_with_its_flags() {
        let dir = tempfile::tempdir().expect("tempdir");
        generate(dir.path()).expect("generate");
        let page = |n: &str| {
            fs::read_to_string(dir.path().join("man").join(format!("{n}.1"))).expect("page")
        };
        assert!(page("svelto-serve").contains("listen\\-port"));
        assert!(page("svelto-admin").contains("svelto\\-admin\\-hotcopy(1)"));
        assert!(page("svelto-admin-hotcopy").contains("incremental"));
        assert!(page("svelto-look-tree").contains("full\\-paths"));
        let look = page("svelto-look");
        assert!(
            look.contains("youngest") && look.contains("transaction"),
            "{look}"
        );
        assert!(page("svelto").contains("svelto\\-admin(1)"));
        // Every page a page names exists.
        for (name, _) in pages() {
            let text = page(&name);
            let named = text.lines().filter_map(|l| l.strip_suffix("(1)"));
            for named in named.filter(|n| n.starts_with("svelto")) {
                let file = named.replace("\\-", "-");
                assert!(
                    dir.path().join("man").join(format!("{file}.1")).exists(),
                    "{name}.1 names {file}(1)"
                );
            }
        }
        let bash = fs::read_to_string(dir.path().join("completions/svelto.bash")).expect("bash");
        assert!(bash.contains("--listen-port") && bash.contains("hotcopy"));
        assert!(
            bash.contains("dirs-changed"),
            "look's subcommands complete too"
        );
    }
}
