//! svnlook's options and subcommands: names, arguments, help text.

use super::*;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Opt {
    Help,
    CopyInfo,
    DiffCopyFrom,
    FullPaths,
    Limit,
    NoDiffAdded,
    NoDiffDeleted,
    DiffCmd,
    IgnoreProperties,
    PropertiesOnly,
    MemoryCacheSize,
    NoNewline,
    NonRecursive,
    Revision,
    Revprop,
    ShowIds,
    ShowInheritedProps,
    Transaction,
    Verbose,
    Version,
    Xml,
    Extensions,
    Quiet,
}

/// (option, long name, short letter, takes an argument)
pub(super) const OPTIONS: &[(Opt, &str, Option<char>, bool)] = &[
    (Opt::Help, "help", Some('h'), false),
    (Opt::Help, "", Some('?'), false),
    (Opt::CopyInfo, "copy-info", None, false),
    (Opt::DiffCopyFrom, "diff-copy-from", None, false),
    (Opt::FullPaths, "full-paths", None, false),
    (Opt::Limit, "limit", Some('l'), true),
    (Opt::NoDiffAdded, "no-diff-added", None, false),
    (Opt::NoDiffDeleted, "no-diff-deleted", None, false),
    (Opt::DiffCmd, "diff-cmd", None, true),
    (Opt::IgnoreProperties, "ignore-properties", None, false),
    (Opt::PropertiesOnly, "properties-only", None, false),
    (Opt::MemoryCacheSize, "memory-cache-size", Some('M'), true),
    (Opt::NoNewline, "no-newline", None, false),
    (Opt::NonRecursive, "non-recursive", Some('N'), false),
    (Opt::Revision, "revision", Some('r'), true),
    (Opt::Revprop, "revprop", None, false),
    (Opt::ShowIds, "show-ids", None, false),
    (Opt::ShowInheritedProps, "show-inherited-props", None, false),
    (Opt::Transaction, "transaction", Some('t'), true),
    (Opt::Verbose, "verbose", Some('v'), false),
    (Opt::Version, "version", None, false),
    (Opt::Xml, "xml", None, false),
    (Opt::Extensions, "extensions", Some('x'), true),
    (Opt::Quiet, "quiet", Some('q'), false),
];

pub(super) fn option_display(opt: Opt) -> String {
    let Some((_, long, short, arg)) = OPTIONS.iter().find(|o| o.0 == opt) else {
        return String::new();
    };
    let arg = if *arg { " ARG" } else { "" };
    match short {
        Some(s) => format!("-{s} [--{long}]{arg}"),
        None => format!("--{long}{arg}"),
    }
}

pub(super) struct Sub {
    pub(super) name: &'static str,
    pub(super) aliases: &'static [&'static str],
    pub(super) opts: &'static [Opt],
}

pub(super) const SUBCOMMANDS: &[Sub] = &[
    Sub {
        name: "author",
        aliases: &[],
        opts: &[Revision, Transaction],
    },
    Sub {
        name: "cat",
        aliases: &[],
        opts: &[Revision, Transaction],
    },
    Sub {
        name: "changed",
        aliases: &[],
        opts: &[Revision, Transaction, CopyInfo],
    },
    Sub {
        name: "date",
        aliases: &[],
        opts: &[Revision, Transaction],
    },
    Sub {
        name: "diff",
        aliases: &[],
        opts: &[
            Revision,
            Transaction,
            NoDiffDeleted,
            NoDiffAdded,
            DiffCopyFrom,
            DiffCmd,
            Extensions,
            IgnoreProperties,
            PropertiesOnly,
        ],
    },
    Sub {
        name: "dirs-changed",
        aliases: &[],
        opts: &[Revision, Transaction],
    },
    Sub {
        name: "filesize",
        aliases: &[],
        opts: &[Revision, Transaction],
    },
    Sub {
        name: "help",
        aliases: &["?", "h"],
        opts: &[],
    },
    Sub {
        name: "history",
        aliases: &[],
        opts: &[Revision, ShowIds, Limit],
    },
    Sub {
        name: "info",
        aliases: &[],
        opts: &[Revision, Transaction],
    },
    Sub {
        name: "log",
        aliases: &[],
        opts: &[Revision, Transaction],
    },
    Sub {
        name: "propget",
        aliases: &["pget", "pg"],
        opts: &[Revision, Transaction, Verbose, Revprop, ShowInheritedProps],
    },
    Sub {
        name: "proplist",
        aliases: &["plist", "pl"],
        opts: &[
            Revision,
            Transaction,
            Verbose,
            Revprop,
            Xml,
            ShowInheritedProps,
        ],
    },
    Sub {
        name: "lock",
        aliases: &[],
        opts: &[],
    },
    Sub {
        name: "tree",
        aliases: &[],
        opts: &[
            Revision,
            Transaction,
            NonRecursive,
            ShowIds,
            FullPaths,
            MemoryCacheSize,
        ],
    },
    Sub {
        name: "uuid",
        aliases: &[],
        opts: &[],
    },
    Sub {
        name: "youngest",
        aliases: &[],
        opts: &[NoNewline],
    },
];
