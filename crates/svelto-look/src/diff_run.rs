//! `diff`: the changed files of a revision or transaction against their bases, printed
//! as svnlook prints them (Subversion's line diff from `crate::diff`).

use crate::*;

pub(crate) const EQUAL_STRING: &str =
    "===================================================================";
pub(crate) const UNDER_STRING: &str =
    "___________________________________________________________________";

/// The roots a diff compares: the revision (or transaction) and a base revision.
pub(crate) struct DiffRun<'c> {
    pub(crate) c: &'c Ctx<'c>,
    pub(crate) opts: DiffOptions,
    /// The `-x` words, for `--diff-cmd`.
    pub(crate) words: Vec<String>,
    /// `svn:date` by revision, for the labels.
    pub(crate) dates: std::collections::HashMap<Revnum, Option<Vec<u8>>>,
    pub(crate) out: Vec<u8>,
}

pub(crate) fn do_diff(c: &Ctx, out: &mut dyn Write) -> Result<()> {
    let st = c.st;
    let words: Vec<String> = st
        .extensions
        .as_deref()
        .unwrap_or("")
        .split([' ', '\t', '\n', '\r'])
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect();
    let opts = if st.diff_cmd.is_some() {
        // The words are the external program's.
        DiffOptions::default()
    } else {
        DiffOptions::parse(&words).map_err(|e| LookError {
            chain: vec![
                (
                    code::INVALID_DIFF_OPTION,
                    "Error in options to internal diff".into(),
                ),
                (code::INVALID_DIFF_OPTION, e),
            ],
        })?
    };
    if c.rev == 0 {
        c.repo.root(0)?;
        return Ok(());
    }
    let Some(tree) = change_tree(&*c.repo, c.rev)? else {
        return Ok(());
    };
    let mut run = DiffRun {
        c,
        opts,
        words,
        dates: Default::default(),
        out: Vec::new(),
    };
    // What was printed before a failure stays printed, as svnlook's stream does.
    let result = run.node(&tree, "", "", c.rev - 1);
    out.write_all(&run.out)?;
    result
}

/// A node in a revision: (revision, relpath).
pub(crate) type Location = (Revnum, String);

/// A property change: (name, old value, new value).
pub(crate) type PropChange<'p> = (&'p [u8], Option<&'p [u8]>, Option<&'p [u8]>);

/// svnlook's `svn_mime_type_is_binary` on a node's `svn:mime-type`.
pub(crate) fn is_binary(props: &PropList) -> bool {
    let Some(m) = props.get(&b"svn:mime-type"[..]) else {
        return false;
    };
    let m = cstr(m);
    let len = m
        .iter()
        .position(|&b| b == b';' || b == b' ')
        .unwrap_or(m.len());
    !m.starts_with(b"text/")
        && !(len == 15 && (&m[..15] == b"image/x-xbitmap" || &m[..15] == b"image/x-xpixmap"))
}

impl DiffRun<'_> {
    /// `path  date (rev N)` or `(txn NAME)`; `rev` None is the empty side.
    pub(crate) fn label(&mut self, path: &str, rev: Option<Revnum>) -> Result<Vec<u8>> {
        let (date, what) = match rev {
            None => (None, " (rev 0)".to_string()),
            Some(r) => {
                let date = match self.dates.get(&r) {
                    Some(d) => d.clone(),
                    None => {
                        let d = self.c.repo.revprops(r)?.remove(&b"svn:date"[..]);
                        self.dates.insert(r, d.clone());
                        d
                    }
                };
                let what = match (self.c.txn, r == self.c.rev) {
                    (Some(t), true) => format!(" (txn {t})"),
                    _ => format!(" (rev {r})"),
                };
                (date, what)
            }
        };
        let datestr = match date {
            Some(d) => {
                let d = cstr(&d);
                let day = &d[..d.len().min(10)];
                let time = d.get(11..).map(|t| &t[..t.len().min(8)]).unwrap_or(b"");
                let mut s = day.to_vec();
                s.push(b' ');
                s.extend_from_slice(time);
                s.extend_from_slice(b" UTC");
                s
            }
            None => b"                       ".to_vec(),
        };
        let mut l = path.as_bytes().to_vec();
        l.push(b'\t');
        l.extend_from_slice(&datestr);
        l.extend_from_slice(what.as_bytes());
        Ok(l)
    }

    pub(crate) fn node_at(&self, rev: Revnum, path: &str) -> Result<Arc<svelto_fs::NodeRev>> {
        match self.c.repo.lookup(rev, path)? {
            Some((_, n)) => Ok(n),
            None => Err(LookError::new(
                code::FS_NOT_FOUND,
                format!("File not found: revision {rev}, path '/{path}'"),
            )),
        }
    }

    pub(crate) fn text(&self, node: &svelto_fs::NodeRev) -> Result<Arc<Vec<u8>>> {
        match &node.text {
            Some(t) => Ok(self.c.repo.read_text(t)?),
            None => Ok(std::sync::Arc::new(Vec::new())),
        }
    }

    pub(crate) fn node(
        &mut self,
        node: &ChangeNode,
        path: &str,
        base_path: &str,
        base_rev: Revnum,
    ) -> Result<()> {
        let c = self.c;
        let st = c.st;
        let mut base_path = base_path.to_string();
        let mut base_rev = base_rev;
        let mut header = Vec::new();
        let mut is_copy = false;
        if let Some((r, from)) = &node.copyfrom {
            is_copy = true;
            base_path = from.clone();
            base_rev = *r;
            header.extend_from_slice(
                format!("Copied: {path} (from rev {r}, {base_path})\n").as_bytes(),
            );
        }
        let mut do_diff = false;
        let mut orig_empty = false;
        let mut binary = false;
        // (original text, modified text), None for an empty side.
        let mut sides: (Option<Location>, Option<Location>) = (None, None);
        let action = node.action;
        if node.kind == NodeKind::File {
            if action == b'R' && node.text_mod {
                do_diff = true;
                sides = (
                    Some((base_rev, base_path.clone())),
                    Some((c.rev, path.to_string())),
                );
            } else if st.diff_copy_from && action == b'A' && is_copy {
                if node.text_mod {
                    do_diff = true;
                    sides = (
                        Some((base_rev, base_path.clone())),
                        Some((c.rev, path.to_string())),
                    );
                }
            } else if !st.no_diff_added && action == b'A' {
                do_diff = true;
                orig_empty = true;
                sides = (None, Some((c.rev, path.to_string())));
            } else if !st.no_diff_deleted && action == b'D' {
                do_diff = true;
                sides = (Some((base_rev, base_path.clone())), None);
            }
            if do_diff {
                for (r, p) in [&sides.0, &sides.1].into_iter().flatten() {
                    if !binary && is_binary(&c.repo.props(&*self.node_at(*r, p)?)?) {
                        binary = true;
                    }
                }
            }
            if header.is_empty() && (action != b'R' || node.text_mod) {
                let word = match action {
                    b'A' => "Added",
                    b'D' => "Deleted",
                    b'R' => "Modified",
                    _ => "Index",
                };
                header.extend_from_slice(format!("{word}: {path}\n").as_bytes());
            }
        }
        let mut header_printed = false;
        if do_diff && !st.properties_only {
            header.extend_from_slice(EQUAL_STRING.as_bytes());
            header.push(b'\n');
            if binary {
                header.extend_from_slice(b"(Binary files differ)\n\n");
                self.out.extend_from_slice(&header);
            } else {
                let a = match &sides.0 {
                    Some((r, p)) => self.text(&*self.node_at(*r, p)?)?,
                    None => std::sync::Arc::new(Vec::new()),
                };
                let b = match &sides.1 {
                    Some((r, p)) => self.text(&*self.node_at(*r, p)?)?,
                    None => std::sync::Arc::new(Vec::new()),
                };
                if let Some(cmd) = &st.diff_cmd {
                    self.out.extend_from_slice(&header);
                    let la = if orig_empty {
                        self.label(path, None)?
                    } else {
                        self.label(&base_path, Some(base_rev))?
                    };
                    let lb = self.label(path, Some(c.rev))?;
                    self.external_diff(cmd, &a, &b, &la, &lb)?;
                    self.out.push(b'\n');
                    header_printed = true;
                    return self.props_and_children(
                        node,
                        path,
                        &base_path,
                        base_rev,
                        is_copy,
                        header_printed,
                    );
                }
                let changes = diff::file_diff(&a, &b, &self.opts);
                if !changes.is_empty() {
                    self.out.extend_from_slice(&header);
                    let la = if orig_empty {
                        self.label(path, None)?
                    } else {
                        self.label(&base_path, Some(base_rev))?
                    };
                    let lb = self.label(path, Some(c.rev))?;
                    diff::write_unified_file(&mut self.out, &a, &b, &changes, &la, &lb, &self.opts);
                    self.out.push(b'\n');
                    header_printed = true;
                } else if !node.prop_mod
                    && ((!st.no_diff_added && action == b'A')
                        || (!st.no_diff_deleted && action == b'D'))
                {
                    self.out.extend_from_slice(&header);
                }
            }
        }
        self.props_and_children(node, path, &base_path, base_rev, is_copy, header_printed)
    }

    /// The property diff of a node (with a header if its text diff printed none), then
    /// its children.
    pub(crate) fn props_and_children(
        &mut self,
        node: &ChangeNode,
        path: &str,
        base_path: &str,
        base_rev: Revnum,
        is_copy: bool,
        header_printed: bool,
    ) -> Result<()> {
        let c = self.c;
        let st = c.st;
        let action = node.action;
        if node.prop_mod && action != b'D' && !st.ignore_properties {
            let local = c.repo.props(&*self.node_at(c.rev, path)?)?;
            let base = if (st.diff_copy_from && action == b'A' && is_copy) || action == b'R' {
                c.repo.props(&*self.node_at(base_rev, base_path)?)?
            } else {
                PropList::new()
            };
            let mut changes: Vec<PropChange> = Vec::new();
            for (k, v) in &local {
                if base.get(k) != Some(v) {
                    changes.push((k, base.get(k).map(|x| &x[..]), Some(v)));
                }
            }
            for (k, v) in &base {
                if !local.contains_key(k) {
                    changes.push((k, Some(v), None));
                }
            }
            changes.retain(|(k, _, _)| !k.starts_with(b"svn:entry:") && !k.starts_with(b"svn:wc:"));
            changes.sort_by(|a, b| a.0.cmp(b.0));
            if !changes.is_empty() {
                if !header_printed {
                    let la = self.label(base_path, Some(base_rev))?;
                    let lb = self.label(path, Some(c.rev))?;
                    self.out
                        .extend_from_slice(format!("Index: {path}\n{EQUAL_STRING}\n").as_bytes());
                    self.out.extend_from_slice(b"--- ");
                    self.out.extend_from_slice(&la);
                    self.out.extend_from_slice(b"\n+++ ");
                    self.out.extend_from_slice(&lb);
                    self.out.push(b'\n');
                }
                self.out.extend_from_slice(
                    format!("\nProperty changes on: {path}\n{UNDER_STRING}\n").as_bytes(),
                );
                for (name, old, new) in changes {
                    let action = match (old, new) {
                        (None, _) => "Added",
                        (_, None) => "Deleted",
                        _ => "Modified",
                    };
                    self.out.extend_from_slice(action.as_bytes());
                    self.out.extend_from_slice(b": ");
                    self.out.extend_from_slice(name);
                    self.out.push(b'\n');
                    diff::write_prop_hunks(&mut self.out, old.unwrap_or(b""), new.unwrap_or(b""));
                }
            }
        }
        for child in &node.children {
            self.node(
                child,
                &join(path, &child.name),
                &join(base_path, &child.name),
                base_rev,
            )?;
        }
        Ok(())
    }

    /// Runs `--diff-cmd` as `svn_io_run_diff2` does: the `-x` words (else `-u`), `-L` and
    /// the two labels, then two temporary files holding the texts.
    pub(crate) fn external_diff(
        &mut self,
        cmd: &str,
        a: &[u8],
        b: &[u8],
        la: &[u8],
        lb: &[u8],
    ) -> Result<()> {
        use std::os::unix::ffi::OsStrExt;
        let dir = std::env::temp_dir();
        let stamp = format!("svelto-look-{}-{}", std::process::id(), self.out.len());
        let fa = dir.join(format!("{stamp}.orig.tmp"));
        let fb = dir.join(format!("{stamp}.tmp"));
        let written = std::fs::write(&fa, a).and_then(|_| std::fs::write(&fb, b));
        let result = written.and_then(|_| {
            let mut command = std::process::Command::new(cmd);
            if self.words.is_empty() {
                command.arg("-u");
            } else {
                command.args(&self.words);
            }
            command
                .arg("-L")
                .arg(std::ffi::OsStr::from_bytes(la))
                .arg("-L")
                .arg(std::ffi::OsStr::from_bytes(lb))
                .arg(&fa)
                .arg(&fb)
                .stderr(std::process::Stdio::inherit())
                .output()
        });
        let _ = std::fs::remove_file(&fa);
        let _ = std::fs::remove_file(&fb);
        let output = match result {
            Ok(o) => o,
            Err(e) => {
                // What the child svnlook forks prints when exec fails, then its exit code.
                let text = e.to_string();
                let reason = text.split(" (os error").next().unwrap_or(&text);
                let _ = write!(io::stderr(), "exec of '{cmd}' failed: {reason}");
                return Err(LookError::new(
                    code::EXTERNAL_PROGRAM,
                    format!("'{cmd}' returned 255"),
                ));
            }
        };
        self.out.extend_from_slice(&output.stdout);
        match output.status.code() {
            Some(0) | Some(1) => Ok(()),
            code => Err(LookError::new(
                code::EXTERNAL_PROGRAM,
                format!("'{cmd}' returned {}", code.unwrap_or(-1)),
            )),
        }
    }
}
