//! `svelto look help SUBCOMMAND` (and `SUBCOMMAND --help`): each subcommand's usage, what it
//! does and its options, laid out as svnlook 1.14 lays them out; and the same tables as a
//! clap definition for the manual page and the shell completions (`crate::manual`).

use super::{option_display, Opt, Sub, OPTIONS, PROG, SUBCOMMANDS};
use std::io::{self, Write};

/// Each subcommand's usage lines (`PROG` stands for the program's name) and description.
const USAGE: &[(&str, &str, &str)] = &[
    ("author", "PROG author REPOS_PATH", "Print the author."),
    (
        "cat",
        "PROG cat REPOS_PATH FILE_PATH",
        "Print the contents of a file.  Leading '/' on FILE_PATH is optional.",
    ),
    (
        "changed",
        "PROG changed REPOS_PATH",
        "Print the paths that were changed.",
    ),
    ("date", "PROG date REPOS_PATH", "Print the datestamp."),
    (
        "diff",
        "PROG diff REPOS_PATH",
        "Print GNU-style diffs of changed files and properties.",
    ),
    (
        "dirs-changed",
        "PROG dirs-changed REPOS_PATH",
        "Print the directories that were themselves changed (property edits)\n\
         or whose file children were changed.",
    ),
    (
        "filesize",
        "PROG filesize REPOS_PATH PATH_IN_REPOS",
        "Print the size (in bytes) of the file located at PATH_IN_REPOS as\n\
         it is represented in the repository.",
    ),
    (
        "help",
        "PROG help [SUBCOMMAND...]",
        "Describe the usage of this program or its subcommands.",
    ),
    (
        "history",
        "PROG history REPOS_PATH [PATH_IN_REPOS]",
        "Print information about the history of a path in the repository (or\n\
         the root directory if no path is supplied).",
    ),
    (
        "info",
        "PROG info REPOS_PATH",
        "Print the author, datestamp, log message size, and log message.",
    ),
    (
        "lock",
        "PROG lock REPOS_PATH PATH_IN_REPOS",
        "If a lock exists on a path in the repository, describe it.",
    ),
    ("log", "PROG log REPOS_PATH", "Print the log message."),
    (
        "propget",
        "1. PROG propget REPOS_PATH PROPNAME PATH_IN_REPOS\n\
         2. PROG propget --revprop REPOS_PATH PROPNAME",
        "Print the raw value of a property on a path in the repository.\n\
         With --revprop, print the raw value of a revision property.",
    ),
    (
        "proplist",
        "1. PROG proplist REPOS_PATH PATH_IN_REPOS\n\
         2. PROG proplist --revprop REPOS_PATH",
        "List the properties of a path in the repository, or\n\
         with the --revprop option, revision properties.\n\
         With -v, show the property values too.",
    ),
    (
        "tree",
        "PROG tree REPOS_PATH [PATH_IN_REPOS]",
        "Print the tree, starting at PATH_IN_REPOS (if supplied, at the root\n\
         of the tree otherwise), optionally showing node revision ids.",
    ),
    (
        "uuid",
        "PROG uuid REPOS_PATH",
        "Print the repository's UUID.",
    ),
    (
        "youngest",
        "PROG youngest REPOS_PATH",
        "Print the youngest revision number.",
    ),
];

/// What each option does, as svnlook's option table says it.
fn option_help(opt: Opt) -> &'static str {
    match opt {
        Opt::Help => "show help on a subcommand",
        Opt::CopyInfo => "show details for copies",
        Opt::DiffCopyFrom => "print differences against the copy source",
        Opt::FullPaths => "show full paths instead of indenting them",
        Opt::Limit => "maximum number of history entries",
        Opt::NoDiffAdded => "do not print differences for added files",
        Opt::NoDiffDeleted => "do not print differences for deleted files",
        Opt::DiffCmd => "use ARG as diff command",
        Opt::IgnoreProperties => "ignore properties during the operation",
        Opt::PropertiesOnly => "show only properties during the operation",
        Opt::MemoryCacheSize => {
            "size of the extra in-memory cache in MB used to\n\
             minimize redundant operations. Default: 16.\n\
             [used for FSFS repositories only]"
        }
        Opt::NoNewline => "do not output the trailing newline",
        Opt::NonRecursive => "operate on single directory only",
        Opt::Revision => "specify revision number ARG",
        Opt::Revprop => "operate on a revision property (use with -r or -t)",
        Opt::ShowIds => "show node revision ids for each path",
        Opt::ShowInheritedProps => "show path's inherited properties",
        Opt::Transaction => "specify transaction name ARG",
        Opt::Verbose => "be verbose",
        Opt::Version => "show program version information",
        Opt::Xml => "output in XML",
        Opt::Extensions => {
            "Specify differencing options for external diff or\n\
             internal diff. Default: '-u'. Options are\n\
             separated by spaces. Internal diff takes:\n  \
             -u, --unified: Show 3 lines of unified context\n  \
             -b, --ignore-space-change: Ignore changes in\n    \
             amount of white space\n  \
             -w, --ignore-all-space: Ignore all white space\n  \
             --ignore-eol-style: Ignore changes in EOL style\n  \
             -U ARG, --context ARG: Show ARG lines of context\n  \
             -p, --show-c-function: Show C function name"
        }
        Opt::Quiet => "no progress (only errors) to stderr",
    }
}

/// Where an option's description starts, as svnlook aligns it.
const HELP_COLUMN: usize = 29;

fn find(name: &str) -> Option<&'static Sub> {
    SUBCOMMANDS
        .iter()
        .find(|s| s.name == name || s.aliases.contains(&name))
}

fn usage_of(sub: &Sub) -> (String, &'static str) {
    let (_, usage, about) = USAGE
        .iter()
        .find(|u| u.0 == sub.name)
        .copied()
        .unwrap_or((sub.name, "", ""));
    (usage.replace("PROG", PROG), about)
}

/// `help TOPIC...`: each known topic's usage; an unknown one is named on standard error,
/// as svnlook does (and still exits 0).
pub(super) fn topics(out: &mut dyn Write, topics: &[String]) -> io::Result<()> {
    for topic in topics {
        match find(topic) {
            Some(sub) => write_topic(out, sub)?,
            None => write!(io::stderr(), "\"{topic}\": unknown command.\n\n")?,
        }
    }
    Ok(())
}

fn write_topic(out: &mut dyn Write, sub: &Sub) -> io::Result<()> {
    let (usage, about) = usage_of(sub);
    let mut header = sub.name.to_string();
    if !sub.aliases.is_empty() {
        header.push_str(&format!(" ({})", sub.aliases.join(", ")));
    }
    header.push_str(": usage: ");
    // Second and later usage lines line up under the first.
    let indent = " ".repeat(header.len());
    let usage = usage.replace('\n', &format!("\n{indent}"));
    write!(out, "{header}{usage}\n\n{about}\n")?;
    if sub.opts.is_empty() {
        return Ok(());
    }
    writeln!(out, "\nValid options:")?;
    for &opt in sub.opts {
        let display = option_display(opt);
        let help = option_help(opt).replace('\n', &format!("\n{}", " ".repeat(HELP_COLUMN)));
        writeln!(out, "  {display:<24} : {help}")?;
    }
    writeln!(out)
}

/// svnlook's subcommands and options as a clap definition: for the manual page and the
/// shell completions only (parsing stays with the option table, which is svnlook's).
pub fn command() -> clap::Command {
    let mut cmd = clap::Command::new(PROG)
        .about("Inspect a revision or a transaction of a repository, as svnlook does")
        .subcommand_required(true)
        .disable_help_subcommand(true);
    for sub in SUBCOMMANDS {
        let (usage, about) = usage_of(sub);
        let mut c = clap::Command::new(sub.name)
            .about(about.lines().next().unwrap_or("").to_string())
            .long_about(about.to_string())
            .override_usage(usage)
            .visible_aliases(sub.aliases.iter().copied());
        for &opt in sub.opts {
            let Some(&(_, long, short, takes)) =
                OPTIONS.iter().find(|o| o.0 == opt && !o.1.is_empty())
            else {
                continue;
            };
            let mut arg = clap::Arg::new(long).long(long).help(option_help(opt));
            if let Some(s) = short {
                arg = arg.short(s);
            }
            arg = if takes {
                arg.value_name("ARG").action(clap::ArgAction::Set)
            } else {
                arg.action(clap::ArgAction::SetTrue)
            };
            c = c.arg(arg);
        }
        cmd = cmd.subcommand(c);
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_subcommand_has_its_usage() {
        for sub in SUBCOMMANDS {
            assert!(
                USAGE.iter().any(|u| u.0 == sub.name),
                "no usage for {}",
                sub.name
            );
        }
        command().debug_assert();
    }

    #[test]
    fn a_topic_is_laid_out_as_svnlook_lays_it_out() {
        let mut out = Vec::new();
        topics(&mut out, &["pg".to_string()]).expect("write");
        let text = String::from_utf8(out).expect("utf-8");
        let pad = " ".repeat("propget (pget, pg): usage: ".len());
        assert!(text.starts_with(&format!(
            "propget (pget, pg): usage: 1. {PROG} propget REPOS_PATH PROPNAME PATH_IN_REPOS\n\
             {pad}2. {PROG} propget --revprop REPOS_PATH PROPNAME\n\n"
        )));
        assert!(text.contains("\n  -r [--revision] ARG      : specify revision number ARG\n"));
        assert!(text.ends_with("inherited properties\n\n"), "{text:?}");
    }
}
