//! `svelto admin create`: a new repository laid out as `svnadmin create` lays one out, so
//! administrators find conf/ and hooks/ where they expect them.

use crate::error::{io, Result};
use std::fs;
use std::path::Path;
use svelto_core::PropList;
use svelto_fs::Backend;

/// The top-level `format` file's contents.
pub const FORMAT: &str = "svelto-repository 1\n";

/// Where the packaged `svelto` binary lives: what hook templates call when no other is
/// named ([`create_for`]).
pub const PACKAGED_SVELTO: &str = "/usr/bin/svelto";

/// Creates a repository of `backend` at `path` with revision 0 dated `date` (an
/// `svn:date` value), its hook templates calling the packaged `svelto`.
pub fn create(backend: &dyn Backend, path: &Path, uuid: &str, date: &str) -> Result<()> {
    create_for(backend, path, uuid, date, PACKAGED_SVELTO)
}

/// [`create`], the hook templates calling the `svelto` binary at `svelto` (hooks run with
/// an empty environment, so a hook names its programs by absolute path, as svnadmin's
/// templates name svnlook; svnlook cannot read a Svelto repository, `svelto look` can).
pub fn create_for(
    backend: &dyn Backend,
    path: &Path,
    uuid: &str,
    date: &str,
    svelto: &str,
) -> Result<()> {
    let e = |what: &str| io(format!("creating {} in {}", what, path.display()));
    if path.join("format").exists() || path.join("db").exists() {
        return Err(crate::ReposError::Refused(format!(
            "'{}' already holds a repository",
            path.display()
        )));
    }
    fs::create_dir_all(path).map_err(e("the directory"))?;
    for dir in ["conf", "hooks", "locks"] {
        fs::create_dir_all(path.join(dir)).map_err(e(dir))?;
    }
    let mut r0 = PropList::new();
    r0.insert(b"svn:date".to_vec(), date.as_bytes().to_vec());
    backend.create(path, uuid, &r0)?;
    let files: [(&str, &str); 4] = [
        ("conf/svnserve.conf", SVNSERVE_CONF),
        ("conf/passwd", PASSWD),
        ("conf/authz", AUTHZ),
        ("conf/hooks-env.tmpl", HOOKS_ENV),
    ];
    for (name, text) in files {
        fs::write(path.join(name), text).map_err(e(name))?;
    }
    for hook in HOOKS {
        let name = format!("hooks/{}.tmpl", hook.0);
        let text = hook_template(hook.0, hook.1, svelto);
        fs::write(path.join(&name), text).map_err(e(&name))?;
    }
    fs::write(
        path.join("locks/db.lock"),
        "Svelto takes its write lock on db/write.lock.\n",
    )
    .map_err(e("locks/db.lock"))?;
    fs::write(path.join("README.txt"), README).map_err(e("README.txt"))?;
    fs::write(path.join("format"), FORMAT).map_err(e("format"))?;
    Ok(())
}

const HOOKS: [(&str, &str); 9] = [
    ("start-commit", "run before a commit transaction is created; arguments: REPOS USER CAPABILITIES TXN-NAME"),
    ("pre-commit", "run before a transaction becomes a revision; arguments: REPOS TXN-NAME; non-zero exit refuses the commit"),
    ("post-commit", "run after a revision is committed; arguments: REPOS REV TXN-NAME"),
    ("pre-revprop-change", "run before a revision property changes; arguments: REPOS REV USER PROPNAME ACTION; new value on stdin; without this hook revision property changes are refused"),
    ("post-revprop-change", "run after a revision property changed; arguments: REPOS REV USER PROPNAME ACTION; old value on stdin"),
    ("pre-lock", "run before a path is locked; arguments: REPOS PATH USER COMMENT STEAL-LOCK-FLAG"),
    ("post-lock", "run after paths are locked; arguments: REPOS USER; the paths on stdin"),
    ("pre-unlock", "run before a path is unlocked; arguments: REPOS PATH USER LOCK-TOKEN BREAK-UNLOCK-FLAG"),
    ("post-unlock", "run after paths are unlocked; arguments: REPOS USER; the paths on stdin"),
];

/// The text of `hooks/NAME.tmpl`: what the hook is, how to enable it, and for the hooks
/// svnadmin's templates give a working body (pre-commit, pre-lock, pre-unlock), the same
/// checks made with `svelto look`; for the others a commented example.
fn hook_template(name: &str, what: &str, svelto: &str) -> String {
    let quoted = svelto.replace('\'', "'\\''");
    let body = match name {
        "pre-commit" => "REPOS=\"$1\"\nTXN=\"$2\"\n\n\
             # Refuse a commit whose log message has no letter or digit.\n\
             \"$SVELTO\" look log -t \"$TXN\" \"$REPOS\" | grep -q '[[:alnum:]]' || {\n  \
             echo \"Please describe the change in the log message.\" >&2\n  exit 1\n}\n\n\
             exit 0\n"
            .to_string(),
        "pre-lock" | "pre-unlock" => {
            let verb = if name == "pre-lock" { "stolen" } else { "broken" };
            format!(
                "REPOS=\"$1\"\nLOCKPATH=\"$2\"\nUSER=\"$3\"\n\n\
                 # A lock held by someone else is not {verb}: only its owner may change it.\n\
                 OWNER=$(\"$SVELTO\" look lock \"$REPOS\" \"$LOCKPATH\" | sed -n 's/^Owner: //p')\n\
                 if [ -z \"$OWNER\" ] || [ \"$OWNER\" = \"$USER\" ]; then\n  exit 0\nfi\n\
                 echo \"$LOCKPATH is locked by $OWNER.\" >&2\nexit 1\n"
            )
        }
        "post-commit" => "REPOS=\"$1\"\nREV=\"$2\"\n\n\
             # For example, mail what changed (svelto look changed, log, diff):\n\
             # \"$SVELTO\" look changed -r \"$REV\" \"$REPOS\" | mail -s \"r$REV\" team@example.org\n\n\
             exit 0\n"
            .to_string(),
        _ => "exit 0\n".to_string(),
    };
    format!(
        "#!/bin/sh\n\n# {name} hook: {what}\n#\n# To enable it, copy this file to hooks/{name} (without .tmpl) and make it\n\
         # executable. Svelto runs hooks with the arguments, standard input and exit\n\
         # code meaning that Subversion documents; the environment is empty unless\n\
         # conf/hooks-env says otherwise, so programs are named by absolute path.\n\
         # A hook examines the repository with `svelto look` (svnlook's subcommands and\n\
         # options): svnlook cannot read a Svelto repository.\n\n\
         SVELTO='{quoted}'\n\n{body}"
    )
}

const README: &str = "This is a Subversion repository served by Svelto; use `svelto admin` \
(not svnadmin) to manage it. The history lives in db/; conf/ and hooks/ are as in a \
repository made by svnadmin create.\n";

const SVNSERVE_CONF: &str =
    "### Configuration of `svelto serve` (and svnserve) for this repository.
### Every option below is commented out and shows its default.

[general]
### Access for users who have not authenticated: read, write or none.
# anon-access = read
### Access for authenticated users: read, write or none.
# auth-access = write
### The password file, relative to this directory.
# password-db = passwd
### The path-based authorization file (relative to this directory, or ^/path in the
### repository).
# authz-db = authz
### A file of groups for authz-db.
# groups-db = groups
### The authentication realm; the repository UUID when unset.
# realm = My First Repository
### Change user names to upper or lower case before comparing them: none, upper, lower.
# force-username-case = none
### A file of environment variables for hook scripts, relative to this directory.
# hooks-env = hooks-env

[sasl]
### SASL is not supported by Svelto; use CRAM-MD5 (passwd) or svn+ssh.
# use-sasl = false

[http]
### HTTP Basic logins check password-db above (the same users as svn://) unless an
### Apache password file (htpasswd's format) is named here, relative to this directory.
# password-db = htpasswd
";

const PASSWD: &str = "### Users and their passwords for CRAM-MD5 authentication (password-db in
### svnserve.conf). One `user = password` line per user.

[users]
# harry = harryssecret
# sally = sallyssecret
";

const AUTHZ: &str = "### Path-based authorization (authz-db in svnserve.conf).

[aliases]
# joe = /C=XZ/ST=Dessert/L=Snake City/O=Snake Oil, Ltd./OU=Research Institute/CN=Joe Average

[groups]
# harry_and_sally = harry,sally

# [/foo/bar]
# harry = rw
# &joe = r
# * =

# [repository:/baz/fuz]
# @harry_and_sally = rw
# * = r
";

const HOOKS_ENV: &str = "### Environment for hook scripts. Copy to hooks-env to use it.
### [default] applies to every hook; a [hookname] section to one hook.

# [default]
# LANG = en_US.UTF-8

# [pre-commit]
# PATH = /usr/local/bin:/usr/bin
";
