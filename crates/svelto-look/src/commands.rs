//! The subcommands: the repository view each looks at, and what each prints.

use crate::*;

/// The repository view and revision a subcommand looks at.
pub(crate) struct Ctx<'s> {
    pub(crate) repo: Arc<dyn ReadRepo>,
    pub(crate) rev: Revnum,
    pub(crate) txn: Option<&'s str>,
    pub(crate) st: &'s LookArgs,
}

pub(crate) fn open<'s>(st: &'s LookArgs, opener: Opener<'_>) -> Result<Ctx<'s>> {
    let path = Path::new(st.repos.as_deref().unwrap_or(""));
    let (repo, txn_rev) = match opener(path, st.txn.as_deref()) {
        Ok(x) => x,
        Err(StoreError::NotARepository(_)) => {
            return Err(LookError::new(
                E_IO,
                format!(
                    "Can't open file '{}/format': No such file or directory",
                    path.display()
                ),
            ))
        }
        Err(e) => return Err(e.into()),
    };
    let rev = match (txn_rev, st.rev) {
        (Some(r), _) => r,
        (None, Some(r)) => r,
        (None, None) => repo.youngest(),
    };
    Ok(Ctx {
        repo,
        rev,
        txn: st.txn.as_deref(),
        st,
    })
}

impl Ctx<'_> {
    pub(crate) fn revprops(&self) -> Result<PropList> {
        Ok(self.repo.revprops(self.rev)?)
    }

    pub(crate) fn revprop(&self, name: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.revprops()?.remove(name.as_bytes()))
    }

    /// The error FSFS gives when it cannot open `path` (shown as `shown`): a file on the
    /// way is "not a directory", else the path is not found.
    pub(crate) fn open_error(&self, path: &str, shown: &str) -> LookError {
        let rel = relpath(path);
        let mut so_far = String::new();
        let comps: Vec<&str> = rel.split('/').filter(|c| !c.is_empty()).collect();
        for comp in comps.iter().take(comps.len().saturating_sub(1)) {
            so_far = join(&so_far, comp);
            match self.repo.lookup(self.rev, &so_far) {
                Ok(Some((_, n))) if n.kind == NodeKind::Dir => continue,
                Ok(Some(_)) => {
                    let uuid = self.repo.uuid().unwrap_or_default();
                    let whence = match self.txn {
                        Some(t) => format!("transaction '{t}'"),
                        None => format!("revision {}", self.rev),
                    };
                    return LookError {
                        chain: vec![
                            (
                                code::FS_NOT_DIRECTORY,
                                format!("Failure opening '/{so_far}' in {whence}"),
                            ),
                            (
                                code::FS_NOT_DIRECTORY,
                                format!("'/{so_far}' is not a directory in filesystem '{uuid}'"),
                            ),
                        ],
                    };
                }
                _ => break,
            }
        }
        self.not_found(shown)
    }

    /// svnlook's "File not found" for a path in this root (shown as given).
    pub(crate) fn not_found(&self, path: &str) -> LookError {
        match self.txn {
            Some(t) => LookError::new(
                code::FS_NOT_FOUND,
                format!("File not found: transaction '{t}', path '{path}'"),
            ),
            None => LookError::new(
                code::FS_NOT_FOUND,
                format!("File not found: revision {}, path '{path}'", self.rev),
            ),
        }
    }

    /// The node at a path argument, or svnlook's `verify_path` error naming `shown`.
    pub(crate) fn verify_path(&self, path: &str, shown: &str) -> Result<Arc<svelto_fs::NodeRev>> {
        match self.repo.lookup(self.rev, &relpath(path))? {
            Some((_, n)) => Ok(n),
            None if is_url(path) => Err(LookError::new(
                code::FS_NOT_FOUND,
                format!("'{shown}' is a URL, probably should be a path"),
            )),
            None => Err(LookError::new(
                code::FS_NOT_FOUND,
                format!("Path '{shown}' does not exist"),
            )),
        }
    }
}

pub(crate) fn dispatch(
    name: &str,
    st: &LookArgs,
    opener: Opener<'_>,
    out: &mut dyn Write,
) -> Result<()> {
    match name {
        "author" => {
            check_args(st, 0)?;
            let c = open(st, opener)?;
            do_author(&c, out)
        }
        "cat" => {
            check_args(st, 1)?;
            let c = open(st, opener)?;
            let path = st.arg1.as_deref().unwrap_or("");
            let node = c.verify_path(path, path)?;
            let Some(text) = node.text.filter(|_| node.kind == NodeKind::File) else {
                return Err(LookError::new(
                    code::FS_NOT_FILE,
                    format!("Path '{path}' is not a file"),
                ));
            };
            c.repo.write_text(&text, out)?;
            Ok(())
        }
        "changed" => {
            check_args(st, 0)?;
            let c = open(st, opener)?;
            if let Some(tree) = change_tree(&*c.repo, c.rev)? {
                print_changed(&tree, "", st.copy_info, out)?;
            }
            Ok(())
        }
        "date" => {
            check_args(st, 0)?;
            let c = open(st, opener)?;
            do_date(&c, out)
        }
        "diff" => {
            check_args(st, 0)?;
            let c = open(st, opener)?;
            do_diff(&c, out)
        }
        "dirs-changed" => {
            check_args(st, 0)?;
            let c = open(st, opener)?;
            if let Some(tree) = change_tree(&*c.repo, c.rev)? {
                for d in dirs_changed(&tree) {
                    out.write_all(d.as_bytes())?;
                    out.write_all(b"/\n")?;
                }
            }
            Ok(())
        }
        "filesize" => {
            check_args(st, 1)?;
            let c = open(st, opener)?;
            let path = st.arg1.as_deref().unwrap_or("");
            let node = c.verify_path(path, path)?;
            let Some(text) = node.text.filter(|_| node.kind == NodeKind::File) else {
                return Err(LookError::new(
                    code::FS_NOT_FILE,
                    format!("Path '{path}' is not a file"),
                ));
            };
            writeln!(out, "{}", text.size)?;
            Ok(())
        }
        "history" => {
            if st.arg2.is_some() {
                return Err(LookError::args(
                    code::CL_ARG_PARSING_ERROR,
                    "Too many arguments given",
                ));
            }
            let c = open(st, opener)?;
            do_history(&c, st.arg1.as_deref().unwrap_or("/"), out)
        }
        "info" => {
            check_args(st, 0)?;
            let c = open(st, opener)?;
            do_author(&c, out)?;
            do_date(&c, out)?;
            do_log(&c, true, out)
        }
        "log" => {
            check_args(st, 0)?;
            let c = open(st, opener)?;
            do_log(&c, false, out)
        }
        "propget" => {
            if st.arg1.is_none() {
                return Err(LookError::args(
                    code::CL_INSUFFICIENT_ARGS,
                    if st.revprop {
                        "Missing propname argument"
                    } else {
                        "Missing propname and repository path arguments"
                    },
                ));
            }
            if !st.revprop && st.arg2.is_none() {
                return Err(LookError::args(
                    code::CL_INSUFFICIENT_ARGS,
                    "Missing propname or repository path argument",
                ));
            }
            if (st.revprop && st.arg2.is_some()) || st.more_args {
                return Err(LookError::args(
                    code::CL_ARG_PARSING_ERROR,
                    "Too many arguments given",
                ));
            }
            let c = open(st, opener)?;
            do_propget(&c, out)
        }
        "proplist" => {
            check_args(st, if st.revprop { 0 } else { 1 })?;
            let c = open(st, opener)?;
            do_proplist(&c, out)
        }
        "tree" => {
            if st.arg2.is_some() {
                return Err(LookError::args(
                    code::CL_ARG_PARSING_ERROR,
                    "Too many arguments given",
                ));
            }
            let c = open(st, opener)?;
            do_tree(&c, st.arg1.as_deref().unwrap_or(""), out)
        }
        "lock" => {
            check_args(st, 1)?;
            let c = open(st, opener)?;
            do_lock(&c, st.arg1.as_deref().unwrap_or(""), out)
        }
        "uuid" => {
            check_args(st, 0)?;
            let c = open(st, opener)?;
            writeln!(out, "{}", c.repo.uuid()?)?;
            Ok(())
        }
        "youngest" => {
            check_args(st, 0)?;
            let c = open(st, opener)?;
            write!(out, "{}{}", c.rev, if st.no_newline { "" } else { "\n" })?;
            Ok(())
        }
        _ => Err(LookError::new(
            code::CL_ARG_PARSING_ERROR,
            format!("Unknown subcommand: '{name}'"),
        )),
    }
}

/// svnlook's `lock`: the lock on a path, if any (nothing printed when there is none).
pub(crate) fn do_lock(c: &Ctx, path: &str, out: &mut dyn Write) -> Result<()> {
    let relpath = path.trim_matches('/');
    let Some(lock) = svelto_repos::locks::get_lock(&*c.repo, relpath)? else {
        return Ok(());
    };
    let human = |d: &str| {
        svelto_core::localtime::human_date(d, &c.st.zone).unwrap_or_else(|| d.to_string())
    };
    writeln!(out, "UUID Token: {}", lock.token)?;
    writeln!(out, "Owner: {}", lock.owner)?;
    writeln!(out, "Created: {}", human(&lock.created))?;
    writeln!(
        out,
        "Expires: {}",
        lock.expires.as_deref().map(human).unwrap_or_default()
    )?;
    let lines = lock
        .comment
        .as_deref()
        .map_or(0, |c| c.matches('\n').count() + 1);
    writeln!(
        out,
        "Comment ({lines} line{}):\n{}",
        if lines == 1 { "" } else { "s" },
        lock.comment.as_deref().unwrap_or("")
    )?;
    Ok(())
}

pub(crate) fn do_author(c: &Ctx, out: &mut dyn Write) -> Result<()> {
    if let Some(a) = c.revprop("svn:author")? {
        out.write_all(cstr(&a))?;
    }
    out.write_all(b"\n")?;
    Ok(())
}

/// A value as a C string: up to its first NUL.
pub(crate) fn cstr(v: &[u8]) -> &[u8] {
    match v.iter().position(|&b| b == 0) {
        Some(i) => &v[..i],
        None => v,
    }
}

pub(crate) fn do_date(c: &Ctx, out: &mut dyn Write) -> Result<()> {
    if let Some(d) = c.revprop("svn:date")? {
        let s = String::from_utf8_lossy(cstr(&d)).into_owned();
        match svelto_core::localtime::human_date(&s, &c.st.zone) {
            Some(h) => out.write_all(h.as_bytes())?,
            None => {
                return Err(LookError::new(
                    code::BAD_DATE,
                    format!("Can't parse date '{s}'"),
                ))
            }
        }
    }
    out.write_all(b"\n")?;
    Ok(())
}

/// Line endings to LF, as `svn_subst_translate_cstring2` with repair does.
pub(crate) fn to_lf(v: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len());
    let mut i = 0;
    while i < v.len() {
        match v[i] {
            b'\r' => {
                out.push(b'\n');
                if v.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    out
}

pub(crate) fn do_log(c: &Ctx, print_size: bool, out: &mut dyn Write) -> Result<()> {
    let Some(log) = c.revprop("svn:log")? else {
        out.write_all(if print_size { b"0\n" } else { b"\n" })?;
        return Ok(());
    };
    let text = to_lf(cstr(&log));
    if print_size {
        writeln!(out, "{}", text.len())?;
    }
    out.write_all(&text)?;
    out.write_all(b"\n")?;
    Ok(())
}

pub(crate) fn print_changed(
    node: &ChangeNode,
    path: &str,
    copy_info: bool,
    out: &mut dyn Write,
) -> Result<()> {
    let mut status = *b"_  ";
    let mut print = true;
    match node.action {
        b'A' => {
            status[0] = b'A';
            if copy_info && node.copyfrom.is_some() {
                status[2] = b'+';
            }
        }
        b'D' => status[0] = b'D',
        b'R' => {
            if !node.text_mod && !node.prop_mod {
                print = false;
            }
            if node.text_mod {
                status[0] = b'U';
            }
            if node.prop_mod {
                status[1] = b'U';
            }
        }
        _ => print = false,
    }
    if print {
        let slash = if node.kind == NodeKind::Dir { "/" } else { "" };
        out.write_all(&status)?;
        writeln!(out, " {path}{slash}")?;
        if copy_info {
            if let Some((r, from)) = &node.copyfrom {
                writeln!(out, "    (from {from}{slash}:r{r})")?;
            }
        }
    }
    for child in &node.children {
        print_changed(child, &join(path, &child.name), copy_info, out)?;
    }
    Ok(())
}

pub(crate) fn do_history(c: &Ctx, path: &str, out: &mut dyn Write) -> Result<()> {
    if c.st.show_ids {
        return Err(LookError::new(
            code::UNSUPPORTED_FEATURE,
            "--show-ids is not supported: Svelto's node-revision ids are not FSFS's",
        ));
    }
    out.write_all(b"REVISION   PATH\n--------   ----\n")?;
    c.repo.root(c.rev)?;
    let mut h = match NodeHistory::new(&*c.repo, c.rev, &relpath(path)) {
        Ok(h) => h,
        Err(ReposError::NotFound { .. }) => return Err(c.not_found(path)),
        // (svn_fs_node_history names the path as given.)
        Err(e) => return Err(e.into()),
    };
    let mut count = 0i64;
    while let Some((p, rev)) = h.prev()? {
        writeln!(out, "{rev:>8}   /{p}")?;
        count += 1;
        if c.st.limit > 0 && count >= c.st.limit {
            break;
        }
    }
    Ok(())
}

pub(crate) fn do_tree(c: &Ctx, path: &str, out: &mut dyn Write) -> Result<()> {
    if c.st.show_ids {
        return Err(LookError::new(
            code::UNSUPPORTED_FEATURE,
            "--show-ids is not supported: Svelto's node-revision ids are not FSFS's",
        ));
    }
    let Some((_, node)) = c.repo.lookup(c.rev, &relpath(path))? else {
        return Err(c.open_error(path, &fspath(path)));
    };
    print_tree(c, path, &node, 0, out)
}

pub(crate) fn print_tree(
    c: &Ctx,
    path: &str,
    node: &svelto_fs::NodeRev,
    indent: usize,
    out: &mut dyn Write,
) -> Result<()> {
    let full = c.st.full_paths;
    if !full {
        out.write_all(&b" ".repeat(indent))?;
    }
    let mut name = if full {
        path
    } else {
        path.rsplit('/').next().unwrap_or("")
    };
    if name.is_empty() {
        name = "/";
    }
    let is_dir = node.kind == NodeKind::Dir;
    out.write_all(name.as_bytes())?;
    if is_dir && name != "/" {
        out.write_all(b"/")?;
    }
    out.write_all(b"\n")?;
    if !is_dir || (c.st.non_recursive && indent != 0) {
        return Ok(());
    }
    let entries = c.repo.dir(node)?;
    for e in entries.iter() {
        let child_path = if path.starts_with('/') {
            if path == "/" {
                format!("/{}", e.name)
            } else {
                format!("{path}/{}", e.name)
            }
        } else {
            join(path, &e.name)
        };
        let child = c.repo.node(e.node)?;
        print_tree(c, &child_path, &child, indent + 1, out)?;
    }
    Ok(())
}

pub(crate) fn do_propget(c: &Ctx, out: &mut dyn Write) -> Result<()> {
    let st = c.st;
    let propname = st.arg1.as_deref().unwrap_or("");
    let (value, path, inherited) = if st.revprop {
        (c.revprop(propname)?, None, Vec::new())
    } else {
        let path = fspath(st.arg2.as_deref().unwrap_or(""));
        let node = c.verify_path(&path, &path)?;
        let value = c.repo.props(&node)?.remove(propname.as_bytes());
        let inherited = if st.show_inherited_props {
            inherited_with(c, &path, Some(propname))?
        } else {
            Vec::new()
        };
        (value, Some(path), inherited)
    };
    let Some(value) = value else {
        if !st.show_inherited_props || inherited.is_empty() {
            let msg = match (&path, c.txn) {
                (None, None) => format!("Property '{propname}' not found on revision {}", c.rev),
                (None, Some(t)) => format!("Property '{propname}' not found on transaction {t}"),
                (Some(p), txn) => {
                    let whence = match txn {
                        None => format!("revision {}", c.rev),
                        Some(t) => format!("transaction {t}"),
                    };
                    if st.show_inherited_props {
                        format!("Property '{propname}' not found on path '{p}' or inherited from a parent in {whence}")
                    } else {
                        format!("Property '{propname}' not found on path '{p}' in {whence}")
                    }
                }
            };
            return Err(LookError::new(code::PROPERTY_NOT_FOUND, msg));
        }
        // Only inherited values.
        return print_pget_inherited(c, path.as_deref().unwrap_or("/"), &inherited, None, out);
    };
    if st.verbose || st.show_inherited_props {
        print_pget_inherited(
            c,
            path.as_deref().unwrap_or("/"),
            &inherited,
            Some(&value),
            out,
        )
    } else {
        out.write_all(&value)?;
        Ok(())
    }
}

pub(crate) fn print_pget_inherited(
    c: &Ctx,
    path: &str,
    inherited: &[(String, PropList)],
    value: Option<&[u8]>,
    out: &mut dyn Write,
) -> Result<()> {
    let st = c.st;
    let propname = st.arg1.as_deref().unwrap_or("");
    for (from, props) in inherited {
        if st.verbose {
            write!(out, "Inherited properties on '{path}',\nfrom '{from}':\n")?;
            print_prop_hash(props, false, out)?;
        } else if let Some(v) = props.values().next() {
            write!(out, "{from} - ")?;
            out.write_all(v)?;
            if inherited.len() > 1 || value.is_some() {
                out.write_all(b"\n")?;
            }
        }
    }
    if let Some(v) = value {
        if st.verbose {
            writeln!(out, "Properties on '{path}':")?;
            let mut one = PropList::new();
            one.insert(propname.as_bytes().to_vec(), v.to_vec());
            print_prop_hash(&one, false, out)?;
        } else {
            write!(out, "{path} - ")?;
            out.write_all(v)?;
        }
    }
    Ok(())
}

/// The properties `path` inherits from its parents (fspaths, root first), limited to
/// `only` when given.
pub(crate) fn inherited_with(
    c: &Ctx,
    path: &str,
    only: Option<&str>,
) -> Result<Vec<(String, PropList)>> {
    let list = svelto_repos::inherited_props(&*c.repo, &relpath(path), c.rev)?;
    let mut out = Vec::new();
    for (p, mut props) in list {
        if let Some(name) = only {
            match props.remove(name.as_bytes()) {
                Some(v) => {
                    props = PropList::new();
                    props.insert(name.as_bytes().to_vec(), v);
                }
                None => continue,
            }
        }
        out.push((format!("/{p}"), props));
    }
    Ok(out)
}

/// `svn_cmdline__indent_string`: `indent` before each line (line ends: `\n`, `\r`,
/// `\r\n`, `\n\r`); the text stops at a NUL.
pub(crate) fn indent_string(s: &[u8], indent: &[u8]) -> Vec<u8> {
    let s = cstr(s);
    let mut out = Vec::with_capacity(s.len() + 8);
    let mut i = 0;
    while i < s.len() {
        let start = i;
        while i < s.len() && s[i] != b'\r' && s[i] != b'\n' {
            i += 1;
        }
        if i < s.len() {
            let c = s[i];
            i += 1;
            if i < s.len() && ((c == b'\r' && s[i] == b'\n') || (c == b'\n' && s[i] == b'\r')) {
                i += 1;
            }
        }
        out.extend_from_slice(indent);
        out.extend_from_slice(&s[start..i]);
    }
    out
}

pub(crate) fn print_prop_hash(
    props: &PropList,
    names_only: bool,
    out: &mut dyn Write,
) -> Result<()> {
    for (name, value) in props {
        out.write_all(b"  ")?;
        out.write_all(name)?;
        out.write_all(b"\n")?;
        if !names_only {
            let mut v = cstr(value).to_vec();
            v.push(b'\n');
            out.write_all(&indent_string(&v, b"    "))?;
        }
    }
    Ok(())
}

pub(crate) fn do_proplist(c: &Ctx, out: &mut dyn Write) -> Result<()> {
    let st = c.st;
    let (props, path, inherited) = if st.revprop {
        (c.revprops()?, None, Vec::new())
    } else {
        let path = fspath(st.arg1.as_deref().unwrap_or(""));
        let node = c.verify_path(&path, &path)?;
        let inherited = if st.show_inherited_props {
            inherited_with(c, &path, None)?
        } else {
            Vec::new()
        };
        (c.repo.props(&node)?, Some(path), inherited)
    };
    if st.xml {
        let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<properties>\n");
        for (from, props) in &inherited {
            x.push_str(&format!("<target\n   path=\"{}\">\n", xml_attr(from)));
            xml_props(&mut x, props, !st.verbose, true);
            x.push_str("</target>\n");
        }
        match (&path, c.txn) {
            (Some(p), _) => x.push_str(&format!("<target\n   path=\"{}\">\n", xml_attr(p))),
            (None, None) => x.push_str(&format!("<revprops\n   rev=\"{}\">\n", c.rev)),
            (None, Some(t)) => x.push_str(&format!("<revprops\n   txn=\"{}\">\n", xml_attr(t))),
        }
        xml_props(&mut x, &props, !st.verbose, false);
        x.push_str(if path.is_some() {
            "</target>\n"
        } else {
            "</revprops>\n"
        });
        x.push_str("</properties>\n");
        out.write_all(x.as_bytes())?;
        return Ok(());
    }
    for (from, props) in &inherited {
        write!(
            out,
            "Inherited properties on '{}',\nfrom '{from}':\n",
            path.as_deref().unwrap_or("")
        )?;
        print_prop_hash(props, !st.verbose, out)?;
    }
    if let Some(p) = &path {
        writeln!(out, "Properties on '{p}':")?;
    }
    print_prop_hash(&props, !st.verbose, out)
}
