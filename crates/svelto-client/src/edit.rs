//! The editor commands of an update drive (svn://'s form, which the HTTP session makes
//! too), read once into [`Edit`] for checkout and update to act on: each parameter
//! checked, each path refused when it would leave the working copy.

use svelto_wire::Item;

use crate::checkout::{set_prop, Entry};
use crate::error::Result;
use crate::ra_svn::{self, lossy, protocol};

/// One editor command. Tokens name open directories and files.
pub(crate) enum Edit<'a> {
    TargetRev(Option<u64>),
    OpenRoot {
        token: &'a [u8],
    },
    /// open-dir (`added` false) or add-dir.
    Dir {
        path: String,
        token: &'a [u8],
        added: bool,
    },
    /// open-file (`added` false) or add-file.
    File {
        path: String,
        token: &'a [u8],
        added: bool,
    },
    DeleteEntry {
        path: String,
    },
    /// absent-dir (`kind` "dir") or absent-file ("file").
    Absent {
        path: String,
        kind: &'static str,
    },
    /// change-dir-prop (`dir` true) or change-file-prop.
    Prop {
        dir: bool,
        token: &'a [u8],
        name: &'a [u8],
        value: Option<&'a [u8]>,
    },
    CloseDir {
        token: &'a [u8],
    },
    ApplyTextdelta {
        token: &'a [u8],
    },
    TextdeltaChunk {
        token: &'a [u8],
        chunk: &'a [u8],
    },
    TextdeltaEnd {
        token: &'a [u8],
    },
    CloseFile {
        token: &'a [u8],
        md5: Option<String>,
    },
    Close,
    Abort,
    Failure(&'a [Item]),
}

impl Edit<'_> {
    /// Reads one editor command.
    pub(crate) fn parse(item: &Item) -> Result<Edit<'_>> {
        let (cmd, p) = split(item)?;
        let path = |i| utf8_path(arg_str(p, i, cmd)?, cmd);
        Ok(match cmd {
            "target-rev" => Edit::TargetRev(p.first().and_then(Item::as_number)),
            "open-root" => Edit::OpenRoot {
                token: arg_str(p, 1, cmd)?,
            },
            "open-dir" | "add-dir" => Edit::Dir {
                path: path(0)?,
                token: arg_str(p, 2, cmd)?,
                added: cmd == "add-dir",
            },
            "open-file" | "add-file" => Edit::File {
                path: path(0)?,
                token: arg_str(p, 2, cmd)?,
                added: cmd == "add-file",
            },
            "delete-entry" => Edit::DeleteEntry { path: path(0)? },
            "absent-dir" | "absent-file" => Edit::Absent {
                path: path(0)?,
                kind: if cmd == "absent-dir" { "dir" } else { "file" },
            },
            "change-dir-prop" | "change-file-prop" => Edit::Prop {
                dir: cmd == "change-dir-prop",
                token: arg_str(p, 0, cmd)?,
                name: arg_str(p, 1, cmd)?,
                value: arg_opt_str(p, 2, cmd)?,
            },
            "close-dir" => Edit::CloseDir {
                token: arg_str(p, 0, cmd)?,
            },
            "apply-textdelta" => Edit::ApplyTextdelta {
                token: arg_str(p, 0, cmd)?,
            },
            "textdelta-chunk" => Edit::TextdeltaChunk {
                token: arg_str(p, 0, cmd)?,
                chunk: arg_str(p, 1, cmd)?,
            },
            "textdelta-end" => Edit::TextdeltaEnd {
                token: arg_str(p, 0, cmd)?,
            },
            "close-file" => Edit::CloseFile {
                token: arg_str(p, 0, cmd)?,
                md5: arg_opt_str(p, 1, cmd)?.map(lossy),
            },
            "close-edit" => Edit::Close,
            "abort-edit" => Edit::Abort,
            "failure" => Edit::Failure(p),
            other => {
                return Err(protocol(
                    "in the update drive",
                    format!("unknown editor command '{other}'"),
                ))
            }
        })
    }
}

/// A property change of a node: an entry prop (`svn:entry:*`) goes to `entry`, a wc prop
/// (`svn:wc:*`) to `wc_props` (dropped when None), any other to `props`. True when
/// `props` changed.
pub(crate) fn change_prop(
    props: &mut Vec<(Vec<u8>, Vec<u8>)>,
    entry: &mut Entry,
    wc_props: Option<&mut Vec<(Vec<u8>, Vec<u8>)>>,
    name: &[u8],
    value: Option<&[u8]>,
) -> bool {
    if name.starts_with(b"svn:wc:") {
        if let Some(wc) = wc_props {
            set_prop(wc, name, value);
        }
        return false;
    }
    if entry.take(name, value) {
        return false;
    }
    set_prop(props, name, value);
    true
}

/// The arguments of an editor command: its name and parameter list.
fn split(item: &Item) -> Result<(&str, &[Item])> {
    match item.as_list() {
        Some([Item::Word(w), Item::List(p), ..]) => Ok((w.as_str(), p.as_slice())),
        _ => Err(protocol(
            "in the update drive",
            format!("not an editor command: {}", ra_svn::short(item)),
        )),
    }
}

fn arg_str<'a>(p: &'a [Item], i: usize, cmd: &str) -> Result<&'a [u8]> {
    p.get(i).and_then(Item::as_string).ok_or_else(|| {
        protocol(
            "in the update drive",
            format!("{cmd}: parameter {} is not a string", i + 1),
        )
    })
}

fn arg_opt_str<'a>(p: &'a [Item], i: usize, cmd: &str) -> Result<Option<&'a [u8]>> {
    match p.get(i).and_then(Item::as_list) {
        Some([]) => Ok(None),
        Some([Item::String(s), ..]) => Ok(Some(s)),
        _ => Err(protocol(
            "in the update drive",
            format!("{cmd}: parameter {} is not an optional string", i + 1),
        )),
    }
}

fn utf8_path(b: &[u8], cmd: &str) -> Result<String> {
    let s = String::from_utf8(b.to_vec())
        .map_err(|_| protocol("in the update drive", format!("{cmd}: path is not UTF-8")))?;
    if s.starts_with('/')
        || s.split('/')
            .any(|seg| seg.is_empty() || seg == "." || seg == ".." || seg == ".svn")
        || s.contains('\0')
    {
        return Err(protocol(
            "in the update drive",
            format!("{cmd}: refusing the path '{s}'"),
        ));
    }
    Ok(s)
}
