//! The administrative area of a stock Subversion 1.14 working copy: `.svn/{entries,format}`,
//! the pristine store `.svn/pristine/XX/SHA1.svn-base` and `.svn/wc.db` (SQLite,
//! `user_version` 31: the tables, indexes, views and refcount triggers the stock client's
//! queries rely on, with the same planner statistics). One connection in exclusive locking
//! mode; the caller groups rows into few transactions.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection};

use crate::error::{file_err, Error, Result};

/// The wc.db schema version of Subversion 1.8 to 1.14.
pub const WC_FORMAT: i64 = 31;

/// The tables, indexes, views and triggers of format 31 (the names and columns are the
/// stock client's; its queries name them).
const SCHEMA: &str = "
CREATE TABLE REPOSITORY (id INTEGER PRIMARY KEY AUTOINCREMENT, root TEXT UNIQUE NOT NULL,
  uuid TEXT NOT NULL);
CREATE INDEX I_UUID ON REPOSITORY (uuid);
CREATE INDEX I_ROOT ON REPOSITORY (root);
CREATE TABLE WCROOT (id INTEGER PRIMARY KEY AUTOINCREMENT, local_abspath TEXT UNIQUE);
CREATE UNIQUE INDEX I_LOCAL_ABSPATH ON WCROOT (local_abspath);
CREATE TABLE PRISTINE (checksum TEXT NOT NULL PRIMARY KEY, compression INTEGER,
  size INTEGER NOT NULL, refcount INTEGER NOT NULL, md5_checksum TEXT NOT NULL);
CREATE INDEX I_PRISTINE_MD5 ON PRISTINE (md5_checksum);
CREATE TABLE ACTUAL_NODE (wc_id INTEGER NOT NULL REFERENCES WCROOT (id),
  local_relpath TEXT NOT NULL, parent_relpath TEXT, properties BLOB, conflict_old TEXT,
  conflict_new TEXT, conflict_working TEXT, prop_reject TEXT, changelist TEXT,
  text_mod TEXT, tree_conflict_data TEXT, conflict_data BLOB,
  older_checksum TEXT REFERENCES PRISTINE (checksum),
  left_checksum TEXT REFERENCES PRISTINE (checksum),
  right_checksum TEXT REFERENCES PRISTINE (checksum),
  PRIMARY KEY (wc_id, local_relpath));
CREATE UNIQUE INDEX I_ACTUAL_PARENT ON ACTUAL_NODE (wc_id, parent_relpath, local_relpath);
CREATE TABLE LOCK (repos_id INTEGER NOT NULL REFERENCES REPOSITORY (id),
  repos_relpath TEXT NOT NULL, lock_token TEXT NOT NULL, lock_owner TEXT,
  lock_comment TEXT, lock_date INTEGER, PRIMARY KEY (repos_id, repos_relpath));
CREATE TABLE WORK_QUEUE (id INTEGER PRIMARY KEY AUTOINCREMENT, work BLOB NOT NULL);
CREATE TABLE WC_LOCK (wc_id INTEGER NOT NULL REFERENCES WCROOT (id),
  local_dir_relpath TEXT NOT NULL, locked_levels INTEGER NOT NULL DEFAULT -1,
  PRIMARY KEY (wc_id, local_dir_relpath));
CREATE TABLE NODES (wc_id INTEGER NOT NULL REFERENCES WCROOT (id),
  local_relpath TEXT NOT NULL, op_depth INTEGER NOT NULL, parent_relpath TEXT,
  repos_id INTEGER REFERENCES REPOSITORY (id), repos_path TEXT, revision INTEGER,
  presence TEXT NOT NULL, moved_here INTEGER, moved_to TEXT, kind TEXT NOT NULL,
  properties BLOB, depth TEXT, checksum TEXT REFERENCES PRISTINE (checksum),
  symlink_target TEXT, changed_revision INTEGER, changed_date INTEGER,
  changed_author TEXT, translated_size INTEGER, last_mod_time INTEGER, dav_cache BLOB,
  file_external INTEGER, inherited_props BLOB,
  PRIMARY KEY (wc_id, local_relpath, op_depth));
CREATE UNIQUE INDEX I_NODES_PARENT ON NODES (wc_id, parent_relpath, local_relpath, op_depth);
CREATE UNIQUE INDEX I_NODES_MOVED ON NODES (wc_id, moved_to, op_depth);
CREATE VIEW NODES_CURRENT AS SELECT * FROM nodes AS n WHERE op_depth =
  (SELECT MAX(op_depth) FROM nodes AS n2 WHERE n2.wc_id = n.wc_id
   AND n2.local_relpath = n.local_relpath);
CREATE VIEW NODES_BASE AS SELECT * FROM nodes WHERE op_depth = 0;
CREATE TRIGGER nodes_insert_trigger AFTER INSERT ON nodes WHEN NEW.checksum IS NOT NULL
BEGIN UPDATE pristine SET refcount = refcount + 1 WHERE checksum = NEW.checksum; END;
CREATE TRIGGER nodes_delete_trigger AFTER DELETE ON nodes WHEN OLD.checksum IS NOT NULL
BEGIN UPDATE pristine SET refcount = refcount - 1 WHERE checksum = OLD.checksum; END;
CREATE TRIGGER nodes_update_checksum_trigger AFTER UPDATE OF checksum ON nodes
WHEN NEW.checksum IS NOT OLD.checksum BEGIN
  UPDATE pristine SET refcount = refcount + 1 WHERE checksum = NEW.checksum;
  UPDATE pristine SET refcount = refcount - 1 WHERE checksum = OLD.checksum; END;
CREATE TABLE EXTERNALS (wc_id INTEGER NOT NULL REFERENCES WCROOT (id),
  local_relpath TEXT NOT NULL, parent_relpath TEXT NOT NULL,
  repos_id INTEGER NOT NULL REFERENCES REPOSITORY (id), presence TEXT NOT NULL,
  kind TEXT NOT NULL, def_local_relpath TEXT NOT NULL, def_repos_relpath TEXT NOT NULL,
  def_operational_revision TEXT, def_revision TEXT, PRIMARY KEY (wc_id, local_relpath));
CREATE UNIQUE INDEX I_EXTERNALS_DEFINED ON EXTERNALS (wc_id, def_local_relpath, local_relpath);
ANALYZE sqlite_master;
DELETE FROM sqlite_stat1;
INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES
  ('NODES', 'sqlite_autoindex_NODES_1', '8000 8000 2 1'),
  ('NODES', 'I_NODES_PARENT', '8000 8000 10 2 1'),
  ('NODES', 'I_NODES_MOVED', '8000 8000 1 1'),
  ('ACTUAL_NODE', 'sqlite_autoindex_ACTUAL_NODE_1', '8000 8000 1'),
  ('ACTUAL_NODE', 'I_ACTUAL_PARENT', '8000 8000 10 1'),
  ('LOCK', 'sqlite_autoindex_LOCK_1', '100 100 1'),
  ('WC_LOCK', 'sqlite_autoindex_WC_LOCK_1', '100 100 1'),
  ('EXTERNALS', 'sqlite_autoindex_EXTERNALS_1', '100 100 1'),
  ('EXTERNALS', 'I_EXTERNALS_DEFINED', '100 100 3 1');
ANALYZE sqlite_master;
PRAGMA user_version = 31;
";

/// One node of the BASE tree (`NODES` at op_depth 0).
#[derive(Debug, Clone, Default)]
pub struct BaseNode<'a> {
    pub local_relpath: &'a str,
    pub repos_path: &'a str,
    pub revision: u64,
    /// `normal`, `incomplete`, `server-excluded`, `not-present`.
    pub presence: &'a str,
    /// `dir` or `file`.
    pub kind: &'a str,
    /// The property skel (None for nodes that are not present).
    pub properties: Option<&'a [u8]>,
    pub depth: Option<&'a str>,
    /// `$sha1$HEX`.
    pub checksum: Option<&'a str>,
    pub changed_revision: Option<u64>,
    pub changed_date: Option<i64>,
    pub changed_author: Option<&'a str>,
    pub translated_size: Option<u64>,
    pub last_mod_time: Option<i64>,
    pub inherited_props: Option<&'a [u8]>,
    /// The wc props (a skel proplist): over http://, a file's `svn:wc:ra_dav:version-url`.
    pub dav_cache: Option<&'a [u8]>,
    /// A file external (`file_external = 1`).
    pub file_external: bool,
}

/// An external as the `EXTERNALS` table records it.
#[derive(Debug, Clone)]
pub struct External<'a> {
    pub local_relpath: &'a str,
    pub def_local_relpath: &'a str,
    /// `dir` or `file`.
    pub kind: &'a str,
    pub repos_root: &'a str,
    pub uuid: &'a str,
    pub def_repos_relpath: &'a str,
    pub peg: Option<u64>,
    pub revision: Option<u64>,
}

/// A BASE node as read back.
#[derive(Debug, Clone, Default)]
pub struct OwnedNode {
    pub local_relpath: String,
    pub repos_path: Option<String>,
    pub revision: Option<u64>,
    pub presence: String,
    pub kind: String,
    pub properties: Option<Vec<u8>>,
    pub depth: Option<String>,
    pub checksum: Option<String>,
    pub changed_revision: Option<u64>,
    pub changed_date: Option<i64>,
    pub changed_author: Option<String>,
    pub translated_size: Option<u64>,
    pub last_mod_time: Option<i64>,
    pub inherited_props: Option<Vec<u8>>,
    pub dav_cache: Option<Vec<u8>>,
    /// From a repository other than the working copy's first.
    pub other_repos: bool,
    pub file_external: bool,
    pub moved: bool,
}

/// An open wc.db with the working copy's paths.
pub struct WcDb {
    conn: Connection,
    path: PathBuf,
    /// `.svn/pristine`.
    pub pristine_dir: PathBuf,
    /// `.svn/tmp`.
    pub tmp_dir: PathBuf,
    made_fanout: [bool; 256],
}

impl WcDb {
    /// Creates the administrative area of a new working copy at `root` (which must not
    /// have one), with its repository.
    pub fn create(root: &Path, repos_root: &str, uuid: &str) -> Result<WcDb> {
        let adm = root.join(".svn");
        if adm.exists() {
            return Err(Error::Usage(format!(
                "'{}' is already a working copy (it has .svn); use 'svn update' there",
                root.display()
            )));
        }
        for dir in [&adm, &adm.join("pristine"), &adm.join("tmp")] {
            std::fs::create_dir_all(dir).map_err(file_err(dir))?;
        }
        for file in ["entries", "format"] {
            let p = adm.join(file);
            std::fs::write(&p, b"12\n").map_err(file_err(&p))?;
        }
        let path = adm.join("wc.db");
        let db_err = |p: &Path| {
            let p = p.to_path_buf();
            move |source| Error::Db { path: p, source }
        };
        let conn = Connection::open(&path).map_err(db_err(&path))?;
        // temp_store and cache_size as in `open`: the checkout's one transaction keeps its
        // pages (16 MB of wc.db for 25,000 files) in memory instead of spilling them to the
        // file page by page when SQLite's default 2 MiB cache fills.
        conn.execute_batch(
            "PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = TRUNCATE;
             PRAGMA synchronous = OFF; PRAGMA case_sensitive_like = 1;
             PRAGMA recursive_triggers = ON; PRAGMA foreign_keys = OFF;
             PRAGMA temp_store = MEMORY; PRAGMA cache_size = -65536;",
        )
        .map_err(db_err(&path))?;
        conn.execute_batch(&format!("BEGIN; {SCHEMA} COMMIT;"))
            .map_err(db_err(&path))?;
        conn.execute(
            "INSERT INTO REPOSITORY (root, uuid) VALUES (?1, ?2)",
            params![repos_root, uuid],
        )
        .map_err(db_err(&path))?;
        conn.execute("INSERT INTO WCROOT (local_abspath) VALUES (NULL)", [])
            .map_err(db_err(&path))?;
        Ok(WcDb {
            conn,
            pristine_dir: adm.join("pristine"),
            tmp_dir: adm.join("tmp"),
            path,
            made_fanout: [false; 256],
        })
    }

    /// Opens the administrative area of the working copy whose root is `root` (format 31
    /// only), in exclusive locking mode.
    pub fn open(root: &Path) -> Result<WcDb> {
        let adm = root.join(".svn");
        let path = adm.join("wc.db");
        if !path.is_file() {
            return Err(Error::Usage(format!(
                "'{}' is not the root of a working copy (no .svn/wc.db there)",
                root.display()
            )));
        }
        let db_err = |p: &Path| {
            let p = p.to_path_buf();
            move |source| Error::Db { path: p, source }
        };
        let conn = Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE)
            .map_err(db_err(&path))?;
        // temp_store = MEMORY: the statement journals of the update's one long transaction
        // (each UPDATE that fires wc.db's triggers gets one) stay in memory instead of
        // spilling past 64 KiB into a file under /var/tmp (an update across 1,000
        // revisions wrote it 42,000 times); the working copy's files are the same.
        // cache_size: up to 64 MiB of pages (SQLite's default keeps 2 MiB): the wc.db of a
        // 25,000-file working copy (16 MB) stays in memory through the update's
        // transaction instead of being read and spilled page by page (23,000 reads and
        // 21,000 writes of 4 KiB in an update across 1,000 revisions).
        conn.execute_batch(
            "PRAGMA locking_mode = EXCLUSIVE; PRAGMA synchronous = OFF;
             PRAGMA case_sensitive_like = 1; PRAGMA recursive_triggers = ON;
             PRAGMA foreign_keys = OFF; PRAGMA temp_store = MEMORY;
             PRAGMA cache_size = -65536;",
        )
        .map_err(db_err(&path))?;
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(db_err(&path))?;
        if version != WC_FORMAT {
            return Err(Error::Usage(format!(
                "the working copy at '{}' has format {version}, not {WC_FORMAT} (Subversion \
                 1.8 to 1.14); use 'svn upgrade' or 'svn update'",
                root.display()
            )));
        }
        Ok(WcDb {
            conn,
            pristine_dir: adm.join("pristine"),
            tmp_dir: adm.join("tmp"),
            path,
            made_fanout: [false; 256],
        })
    }

    /// The number of rows `sql` (a `SELECT COUNT(*)`) counts.
    pub fn count(&self, sql: &str) -> Result<i64> {
        self.conn
            .query_row(sql, [], |r| r.get(0))
            .map_err(self.err())
    }

    /// Whether this is a checkout that never finished: only the root's BASE row, still
    /// `incomplete`, and nothing else recorded (no other node, no local change, no work
    /// queue item, no lock). Svelto's checkout records every other row in one transaction
    /// at its end, so a checkout killed before that leaves exactly this.
    pub fn is_unfinished_checkout(&self) -> Result<bool> {
        Ok(self.count(
            "SELECT COUNT(*) FROM NODES WHERE local_relpath = '' AND op_depth = 0 \
             AND presence = 'incomplete'",
        )? == 1
            && self.count("SELECT COUNT(*) FROM NODES")? == 1
            && self.count("SELECT COUNT(*) FROM ACTUAL_NODE")? == 0
            && self.count("SELECT COUNT(*) FROM WORK_QUEUE")? == 0
            && self.count("SELECT COUNT(*) FROM WC_LOCK")? == 0)
    }

    /// The repository (root URL, UUID) of the working copy.
    pub fn repository(&self) -> Result<(String, String)> {
        self.conn
            .query_row("SELECT root, uuid FROM REPOSITORY WHERE id = 1", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .map_err(self.err())
    }

    /// The id of the repository at `root` (with `uuid`), added when the working copy has
    /// none from it yet.
    pub fn repos_id(&self, root: &str, uuid: &str) -> Result<i64> {
        let found: Option<i64> = self
            .conn
            .query_row("SELECT id FROM REPOSITORY WHERE root = ?1", [root], |r| {
                r.get(0)
            })
            .map(Some)
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(None),
                e => Err(e),
            })
            .map_err(self.err())?;
        if let Some(id) = found {
            return Ok(id);
        }
        self.conn
            .execute(
                "INSERT INTO REPOSITORY (root, uuid) VALUES (?1, ?2)",
                params![root, uuid],
            )
            .map_err(self.err())?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Registers an external (an `EXTERNALS` row) at `local_relpath`, defined by the
    /// directory `def_local_relpath`: where it comes from and the definition's peg
    /// (`def_operational_revision`) and operative revisions.
    pub fn put_external(&self, e: &External) -> Result<()> {
        let repos_id = self.repos_id(e.repos_root, e.uuid)?;
        self.conn
            .execute(
                "INSERT OR REPLACE INTO EXTERNALS (wc_id, local_relpath, parent_relpath,
                   presence, kind, def_local_relpath, repos_id, def_repos_relpath,
                   def_operational_revision, def_revision)
                 VALUES (1, ?1, ?2, 'normal', ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    e.local_relpath,
                    parent_relpath(e.local_relpath).unwrap_or(""),
                    e.kind,
                    e.def_local_relpath,
                    repos_id,
                    e.def_repos_relpath,
                    e.peg.map(|r| r as i64),
                    e.revision.map(|r| r as i64),
                ],
            )
            .map_err(self.err())?;
        Ok(())
    }

    /// Sets a BASE node's last author where none is recorded (an update keeps the one it
    /// had when the new revision has none, as svn does).
    pub fn keep_author(&self, relpath: &str, author: &str) -> Result<()> {
        self.conn
            .execute(
                "UPDATE NODES SET changed_author = ?2 WHERE wc_id = 1 AND local_relpath = ?1
                   AND op_depth = 0 AND changed_author IS NULL",
                params![relpath, author],
            )
            .map_err(self.err())?;
        Ok(())
    }

    /// The SHA-1s (hex) of the pristine texts recorded.
    pub fn pristine_sha1s(&self) -> Result<std::collections::HashSet<String>> {
        let mut stmt = self
            .conn
            .prepare("SELECT checksum FROM PRISTINE")
            .map_err(self.err())?;
        let rows = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .map_err(self.err())?;
        let mut out = std::collections::HashSet::new();
        for row in rows {
            let c = row.map_err(self.err())?;
            out.insert(c.strip_prefix("$sha1$").unwrap_or(&c).to_string());
        }
        Ok(out)
    }

    /// The externals registered (`EXTERNALS` rows): (local relpath, kind, the repository
    /// root URL, the repository relpath defined).
    pub fn externals(&self) -> Result<Vec<(String, String, String, String)>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT e.local_relpath, e.kind, r.root, e.def_repos_relpath
                 FROM EXTERNALS e JOIN REPOSITORY r ON r.id = e.repos_id
                 WHERE e.wc_id = 1 ORDER BY e.local_relpath",
            )
            .map_err(self.err())?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .map_err(self.err())?;
        let mut out = Vec::new();
        for row in rows {
            out.push(row.map_err(self.err())?);
        }
        Ok(out)
    }

    /// Forgets the external registered at `local_relpath` (its `EXTERNALS` row, and a file
    /// external's `NODES` row).
    pub fn delete_external(&self, local_relpath: &str) -> Result<()> {
        self.conn
            .execute(
                "DELETE FROM EXTERNALS WHERE wc_id = 1 AND local_relpath = ?1",
                params![local_relpath],
            )
            .map_err(self.err())?;
        self.conn
            .execute(
                "DELETE FROM NODES WHERE wc_id = 1 AND local_relpath = ?1
                   AND op_depth = 0 AND file_external IS NOT NULL",
                params![local_relpath],
            )
            .map_err(self.err())?;
        Ok(())
    }

    /// Forgets the file external at `local_relpath` as svn does when its definition goes:
    /// its `EXTERNALS` row, and its `NODES` row becomes a `not-present` marker (revision
    /// 0, `changed_date` 0, the parent's repository path and the name: svn's row) when the parent directory is in this
    /// working copy's BASE; the next update removes the marker unless the server adds a
    /// node there.
    pub fn remove_file_external(&self, local_relpath: &str) -> Result<()> {
        self.delete_external(local_relpath)?;
        let Some(parent) = parent_relpath(local_relpath) else {
            return Ok(());
        };
        let name = local_relpath.rsplit('/').next().unwrap_or(local_relpath);
        let parent_row: Option<(i64, String)> = self
            .conn
            .query_row(
                "SELECT repos_id, repos_path FROM NODES WHERE wc_id = 1 AND local_relpath = ?1
                   AND op_depth = 0",
                params![parent],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map(Some)
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(None),
                e => Err(e),
            })
            .map_err(self.err())?;
        let Some((repos_id, parent_repos)) = parent_row else {
            return Ok(());
        };
        let repos_path = if parent_repos.is_empty() {
            name.to_string()
        } else {
            format!("{parent_repos}/{name}")
        };
        self.conn
            .execute(
                "INSERT INTO NODES (wc_id, local_relpath, op_depth, parent_relpath, repos_id,
                   repos_path, revision, presence, kind, changed_date)
                 VALUES (1, ?1, 0, ?2, ?3, ?4, 0, 'not-present', 'file', 0)",
                params![local_relpath, parent, repos_id, repos_path],
            )
            .map_err(self.err())?;
        Ok(())
    }

    /// Removes the `not-present` BASE rows (after an update: what the server did not add
    /// again is gone, as svn's bump removes it).
    pub fn delete_not_present(&self) -> Result<()> {
        self.conn
            .execute(
                "DELETE FROM NODES WHERE wc_id = 1 AND op_depth = 0 AND presence = 'not-present'",
                [],
            )
            .map_err(self.err())?;
        Ok(())
    }

    /// A node a tree conflict shadows: a `base-deleted` row at `op_depth` (the conflict's
    /// node and what is below it), and for the conflict's own node its `ACTUAL_NODE` row
    /// with the conflict skel.
    pub fn put_base_deleted(
        &self,
        relpath: &str,
        kind: &str,
        op_depth: i64,
        conflict: Option<&[u8]>,
    ) -> Result<()> {
        let parent = parent_relpath(relpath).unwrap_or("");
        self.conn
            .execute(
                "INSERT INTO NODES (wc_id, local_relpath, op_depth, parent_relpath, presence,
                   kind) VALUES (1, ?1, ?2, ?3, 'base-deleted', ?4)",
                params![relpath, op_depth, parent, kind],
            )
            .map_err(self.err())?;
        if let Some(data) = conflict {
            self.put_actual_conflict(relpath, data)?;
        }
        Ok(())
    }

    /// A node's `ACTUAL_NODE` row with a conflict skel (`conflict_data`).
    pub fn put_actual_conflict(&self, relpath: &str, data: &[u8]) -> Result<()> {
        self.conn
            .execute(
                "INSERT INTO ACTUAL_NODE (wc_id, local_relpath, parent_relpath,
                   conflict_data) VALUES (1, ?1, ?2, ?3)",
                params![relpath, parent_relpath(relpath).unwrap_or(""), data],
            )
            .map_err(self.err())?;
        Ok(())
    }

    /// The BASE node at `relpath` and everything below it copied into WORKING at
    /// `op_depth` (what svn keeps of a node with local changes that an update deletes: a
    /// copy of its last base, `A  +`), parents first.
    pub fn copy_base_to_working(&self, relpath: &str, op_depth: i64) -> Result<()> {
        self.conn
            .execute(
                "INSERT INTO NODES (wc_id, local_relpath, op_depth, parent_relpath, repos_id,
                   repos_path, revision, presence, depth, kind, changed_revision, changed_date,
                   changed_author, checksum, properties, translated_size, last_mod_time,
                   symlink_target)
                 SELECT wc_id, local_relpath, ?2, parent_relpath, repos_id, repos_path,
                   revision, presence, depth, kind, changed_revision, changed_date,
                   changed_author, checksum, properties, translated_size, last_mod_time,
                   symlink_target
                 FROM NODES WHERE wc_id = 1 AND op_depth = 0
                   AND (local_relpath = ?1
                        OR substr(local_relpath, 1, length(?1) + 1) = ?1 || '/')
                 ORDER BY local_relpath",
                params![relpath, op_depth],
            )
            .map_err(self.err())?;
        Ok(())
    }

    /// The repository relpath of the working copy's root.
    pub fn root_repos_path(&self) -> Result<String> {
        self.conn
            .query_row(
                "SELECT repos_path FROM NODES WHERE local_relpath = '' AND op_depth = 0",
                [],
                |r| r.get(0),
            )
            .map_err(self.err())
    }

    /// Every BASE node, parents before children.
    pub fn base_nodes(&self) -> Result<Vec<OwnedNode>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT local_relpath, repos_path, revision, presence, kind, properties, depth,
                   checksum, changed_revision, changed_date, changed_author, translated_size,
                   last_mod_time, inherited_props, repos_id, file_external, moved_to, dav_cache
                 FROM NODES WHERE wc_id = 1 AND op_depth = 0 ORDER BY local_relpath",
            )
            .map_err(self.err())?;
        let rows = stmt
            .query_map([], |r| {
                Ok(OwnedNode {
                    local_relpath: r.get(0)?,
                    repos_path: r.get(1)?,
                    revision: r.get::<_, Option<i64>>(2)?.map(|v| v as u64),
                    presence: r.get(3)?,
                    kind: r.get(4)?,
                    properties: r.get(5)?,
                    depth: r.get(6)?,
                    checksum: r.get(7)?,
                    changed_revision: r.get::<_, Option<i64>>(8)?.map(|v| v as u64),
                    changed_date: r.get(9)?,
                    changed_author: r.get(10)?,
                    translated_size: r.get::<_, Option<i64>>(11)?.map(|v| v as u64),
                    last_mod_time: r.get(12)?,
                    inherited_props: r.get(13)?,
                    other_repos: r.get::<_, Option<i64>>(14)?.is_some_and(|id| id != 1),
                    file_external: r.get::<_, Option<i64>>(15)?.is_some(),
                    moved: r.get::<_, Option<String>>(16)?.is_some(),
                    dav_cache: r.get(17)?,
                })
            })
            .map_err(self.err())?;
        let mut out = Vec::new();
        for row in rows {
            out.push(row.map_err(self.err())?);
        }
        Ok(out)
    }

    /// The BASE directories (present, not file externals) whose properties name
    /// `svn:externals`: (relpath, properties skel), in relpath order; the other rows are
    /// not read.
    pub fn dirs_with_externals(&self) -> Result<Vec<(String, Vec<u8>)>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT local_relpath, properties FROM NODES
                 WHERE wc_id = 1 AND op_depth = 0 AND kind = 'dir' AND presence = 'normal'
                   AND file_external IS NULL
                   AND instr(properties, CAST('svn:externals' AS BLOB)) > 0
                 ORDER BY local_relpath",
            )
            .map_err(self.err())?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(self.err())?;
        let mut out = Vec::new();
        for row in rows {
            out.push(row.map_err(self.err())?);
        }
        Ok(out)
    }

    /// Deletes a BASE node and every node below it.
    pub fn delete_base_tree(&self, relpath: &str) -> Result<()> {
        // Below RELPATH: from RELPATH + '/' up to RELPATH + '0' ('/' + 1), a range of the
        // primary key, not a scan of every row.
        let mut stmt = self
            .conn
            .prepare_cached(
                "DELETE FROM NODES WHERE wc_id = 1 AND op_depth = 0
                   AND local_relpath = ?1",
            )
            .map_err(self.err())?;
        stmt.execute(params![relpath]).map_err(self.err())?;
        let mut stmt = self
            .conn
            .prepare_cached(
                "DELETE FROM NODES WHERE wc_id = 1 AND op_depth = 0
                   AND local_relpath > (?1 || '/') AND local_relpath < (?1 || '0')",
            )
            .map_err(self.err())?;
        stmt.execute(params![relpath]).map_err(self.err())?;
        Ok(())
    }

    /// The inherited properties cached at the root.
    pub fn set_root_iprops(&self, iprops: &[u8]) -> Result<()> {
        self.conn
            .execute(
                "UPDATE NODES SET inherited_props = ?1
                 WHERE wc_id = 1 AND local_relpath = '' AND op_depth = 0",
                params![iprops],
            )
            .map_err(self.err())?;
        Ok(())
    }

    /// Every BASE node's repository path becomes `root_repos` joined with its local
    /// relpath (a switch of the whole working copy; file externals keep theirs).
    pub fn rebase_repos_paths(&self, root_repos: &str) -> Result<()> {
        self.conn
            .execute(
                "UPDATE NODES SET repos_path = CASE
                   WHEN local_relpath = '' THEN ?1
                   WHEN ?1 = '' THEN local_relpath
                   ELSE ?1 || '/' || local_relpath END
                 WHERE wc_id = 1 AND op_depth = 0 AND file_external IS NULL",
                params![root_repos],
            )
            .map_err(self.err())?;
        Ok(())
    }

    /// A BASE file's recorded size and modification time (of its working file).
    pub fn set_recorded_info(&self, relpath: &str, size: u64, mtime: Option<i64>) -> Result<()> {
        self.conn
            .execute(
                "UPDATE NODES SET translated_size = ?2, last_mod_time = ?3
                 WHERE wc_id = 1 AND local_relpath = ?1 AND op_depth = 0",
                params![relpath, size as i64, mtime],
            )
            .map_err(self.err())?;
        Ok(())
    }

    /// Appends the work queue's items (skels, libsvn_wc's `workqueue.c` forms), run in
    /// this order by `svn cleanup` if the work is interrupted.
    pub fn put_work_queue(&self, items: &[Vec<u8>]) -> Result<()> {
        let mut stmt = self
            .conn
            .prepare_cached("INSERT INTO WORK_QUEUE (work) VALUES (?1)")
            .map_err(self.err())?;
        for item in items {
            stmt.execute(params![item]).map_err(self.err())?;
        }
        Ok(())
    }

    /// Empties the work queue (its work is done).
    pub fn clear_work_queue(&self) -> Result<()> {
        self.conn
            .execute("DELETE FROM WORK_QUEUE", [])
            .map_err(self.err())?;
        Ok(())
    }

    /// Every BASE node's revision becomes `rev` (an update's bump).
    pub fn bump_revisions(&self, rev: u64) -> Result<()> {
        self.conn
            .execute(
                "UPDATE NODES SET revision = ?1
                 WHERE wc_id = 1 AND op_depth = 0 AND file_external IS NULL",
                params![rev as i64],
            )
            .map_err(self.err())?;
        Ok(())
    }

    fn err(&self) -> impl FnOnce(rusqlite::Error) -> Error {
        let path = self.path.clone();
        move |source| Error::Db { path, source }
    }

    pub fn begin(&self) -> Result<()> {
        self.conn.execute_batch("BEGIN").map_err(self.err())
    }

    pub fn commit(&self) -> Result<()> {
        self.conn.execute_batch("COMMIT").map_err(self.err())
    }

    /// Inserts or replaces a BASE node.
    pub fn put_base(&self, n: &BaseNode) -> Result<()> {
        let parent = parent_relpath(n.local_relpath);
        let mut stmt = self
            .conn
            .prepare_cached(
                "INSERT OR REPLACE INTO NODES (wc_id, local_relpath, op_depth, parent_relpath,
                   repos_id, repos_path, revision, presence, kind, properties, depth, checksum,
                   changed_revision, changed_date, changed_author, translated_size,
                   last_mod_time, inherited_props, dav_cache, file_external)
                 VALUES (1, ?1, 0, ?2, 1, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,
                   ?16, ?17)",
            )
            .map_err(self.err())?;
        stmt.execute(params![
            n.local_relpath,
            parent,
            n.repos_path,
            n.revision as i64,
            n.presence,
            n.kind,
            n.properties,
            n.depth,
            n.checksum,
            n.changed_revision.map(|r| r as i64),
            n.changed_date,
            n.changed_author,
            n.translated_size.map(|s| s as i64),
            n.last_mod_time,
            n.inherited_props,
            n.dav_cache,
            n.file_external.then_some(1),
        ])
        .map_err(self.err())?;
        Ok(())
    }

    /// Records a pristine text (refcount 0: the NODES triggers count references).
    pub fn put_pristine(&self, sha1: &str, md5: &str, size: u64) -> Result<()> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "INSERT OR IGNORE INTO PRISTINE (checksum, compression, size, refcount,
                   md5_checksum) VALUES (?1, NULL, ?2, 0, ?3)",
            )
            .map_err(self.err())?;
        stmt.execute(params![
            format!("$sha1${sha1}"),
            size as i64,
            format!("$md5 ${md5}")
        ])
        .map_err(self.err())?;
        Ok(())
    }

    /// Records the pristine texts of a drive at its end, in checksum order (SHA-1 hex to
    /// MD5 hex and size), each with the number of NODES rows that name it: the NODES
    /// triggers found no PRISTINE row to count while the rows went in, and a B-tree filled
    /// in key order costs less than one filled at random.
    pub fn put_pristines_counted(&self, texts: &BTreeMap<String, (String, u64)>) -> Result<()> {
        for (sha1, (md5, size)) in texts {
            self.put_pristine(sha1, md5, *size)?;
        }
        self.conn
            .execute_batch(
                "UPDATE PRISTINE SET refcount = c.n FROM (SELECT checksum, count(*) AS n
                   FROM NODES WHERE checksum IS NOT NULL GROUP BY checksum) AS c
                 WHERE PRISTINE.checksum = c.checksum",
            )
            .map_err(self.err())
    }

    /// Where the pristine text with this SHA-1 (hex) lives, its fan-out directory made.
    pub fn pristine_path(&mut self, sha1: &str) -> Result<PathBuf> {
        let dir = self.pristine_dir.join(&sha1[..2]);
        let idx = usize::from_str_radix(&sha1[..2], 16).unwrap_or(0);
        if !self.made_fanout[idx] {
            std::fs::create_dir_all(&dir).map_err(file_err(&dir))?;
            self.made_fanout[idx] = true;
        }
        Ok(dir.join(format!("{sha1}.svn-base")))
    }
}

/// The parent of a local relpath (None for the root, `""`).
pub fn parent_relpath(relpath: &str) -> Option<&str> {
    if relpath.is_empty() {
        None
    } else {
        Some(relpath.rsplit_once('/').map_or("", |(p, _)| p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skel;

    #[test]
    fn a_new_database_has_the_schema_version_and_the_repository() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let db = WcDb::create(dir.path(), "svn://h/r", "uuid-1").unwrap_or_else(|e| panic!("{e}"));
        let v: i64 = db
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(v, WC_FORMAT);
        db.put_pristine("aa", "bb", 3)
            .unwrap_or_else(|e| panic!("{e}"));
        db.put_base(&BaseNode {
            local_relpath: "f",
            repos_path: "f",
            presence: "normal",
            kind: "file",
            checksum: Some("$sha1$aa"),
            ..BaseNode::default()
        })
        .unwrap_or_else(|e| panic!("{e}"));
        let refs: i64 = db
            .conn
            .query_row("SELECT refcount FROM PRISTINE", [], |r| r.get(0))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(refs, 1, "the insert trigger counts the reference");
        assert!(WcDb::create(dir.path(), "svn://h/r", "u").is_err());
        assert_eq!(parent_relpath("a/b"), Some("a"));
        assert_eq!(parent_relpath("a"), Some(""));
        assert_eq!(parent_relpath(""), None);
    }

    #[test]
    fn pristines_recorded_after_their_nodes_get_the_count_of_their_references() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let db = WcDb::create(dir.path(), "svn://h/r", "uuid-1").unwrap_or_else(|e| panic!("{e}"));
        db.begin().unwrap_or_else(|e| panic!("{e}"));
        for (path, sha1) in [("a", "bb"), ("b", "aa"), ("c", "bb")] {
            db.put_base(&BaseNode {
                local_relpath: path,
                repos_path: path,
                presence: "normal",
                kind: "file",
                checksum: Some(&format!("$sha1${sha1}")),
                ..BaseNode::default()
            })
            .unwrap_or_else(|e| panic!("{e}"));
        }
        let texts: BTreeMap<String, (String, u64)> =
            [("bb", "m2", 2), ("aa", "m1", 1), ("cc", "m3", 3)]
                .into_iter()
                .map(|(s, m, n)| (s.to_string(), (m.to_string(), n)))
                .collect();
        db.put_pristines_counted(&texts)
            .unwrap_or_else(|e| panic!("{e}"));
        db.commit().unwrap_or_else(|e| panic!("{e}"));
        let mut stmt = db
            .conn
            .prepare(
                "SELECT checksum, size, refcount, md5_checksum FROM PRISTINE ORDER BY checksum",
            )
            .unwrap_or_else(|e| panic!("{e}"));
        let rows: Vec<(String, i64, i64, String)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap_or_else(|e| panic!("{e}"))
            .collect::<std::result::Result<_, _>>()
            .unwrap_or_else(|e| panic!("{e}"));
        let want = |s: &str, n, r, m: &str| (format!("$sha1${s}"), n, r, format!("$md5 ${m}"));
        assert_eq!(
            rows,
            vec![
                want("aa", 1, 1, "m1"),
                want("bb", 2, 2, "m2"),
                want("cc", 3, 0, "m3")
            ]
        );
    }

    #[test]
    fn a_deleted_tree_is_its_node_and_what_is_below_and_externals_are_found() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let db = WcDb::create(dir.path(), "svn://h/r", "uuid-1").unwrap_or_else(|e| panic!("{e}"));
        let ext = skel::proplist([(b"svn:externals".as_slice(), b"^/x x\n".as_slice())]);
        let other = skel::proplist([(b"svn:ignore".as_slice(), b"svn:externals".as_slice())]);
        // Names that sort next to "a/" ('-' and '.' before '/', '0' right after it).
        for (rel, props) in [
            ("", None),
            ("a", Some(&ext)),
            ("a/b", None),
            ("a/b/c", Some(&ext)),
            ("a-b", None),
            ("a.b", Some(&other)),
            ("a0", Some(&ext)),
            ("ab", None),
        ] {
            db.put_base(&BaseNode {
                local_relpath: rel,
                repos_path: rel,
                presence: "normal",
                kind: "dir",
                properties: props.map(Vec::as_slice),
                ..BaseNode::default()
            })
            .unwrap_or_else(|e| panic!("{e}"));
        }
        let found: Vec<String> = db
            .dirs_with_externals()
            .unwrap_or_else(|e| panic!("{e}"))
            .into_iter()
            .map(|(rel, _)| rel)
            .collect();
        // (a.b names svn:externals in a value only: its properties are parsed afterwards)
        assert_eq!(found, ["a", "a.b", "a/b/c", "a0"]);
        db.delete_base_tree("a").unwrap_or_else(|e| panic!("{e}"));
        let left: Vec<String> = db
            .base_nodes()
            .unwrap_or_else(|e| panic!("{e}"))
            .into_iter()
            .map(|n| n.local_relpath)
            .collect();
        assert_eq!(left, ["", "a-b", "a.b", "a0", "ab"]);
    }
}
