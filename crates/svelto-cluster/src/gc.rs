//! The orphan collector (docs/cluster.md, "Orphans"): one pass over one repository's
//! objects deletes the segments no published head can ever name, and the staged texts of
//! forwarded commits (`txn/COMMITID/...`) left longer than `txn-max-age`. It never touches
//! `idx/`, never deletes an object younger than `gc-min-age` (its last-modified time as the
//! store's listing gives it), and reads no clock: the caller says what time it is.

use std::time::Duration;

use object_store::path::Path as ObjectPath;
use object_store::{ObjectMeta, ObjectStore, ObjectStoreExt};

use crate::head::{CommitId, SegmentRef};
use crate::{ClusterError, Repository};

/// How old an object must be before a pass may delete it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GcSettings {
    /// Nothing younger is deleted (`gc-min-age`, default 1 h): margin for the skew between
    /// the object store's clock and the caller's.
    pub min_age: Duration,
    /// A `txn/COMMITID/` prefix is deleted once its newest object is this old
    /// (`txn-max-age`, default 24 h; at least `min_age` is applied as well).
    pub txn_max_age: Duration,
}

impl Default for GcSettings {
    fn default() -> Self {
        GcSettings {
            min_age: Duration::from_secs(3600),
            txn_max_age: Duration::from_secs(24 * 3600),
        }
    }
}

/// What one pass saw and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Collected {
    /// The youngest revision of the head read after the listing (the pass's reference).
    pub youngest: u64,
    /// `seg/` objects listed.
    pub segments_listed: usize,
    /// The orphaned segments deleted: key and size in bytes.
    pub deleted: Vec<(String, u64)>,
    /// The `txn/` objects deleted: key and size in bytes.
    pub txn_deleted: Vec<(String, u64)>,
    /// Orphans kept because they are younger than `gc-min-age` (or their `txn/` prefix
    /// younger than `txn-max-age`).
    pub kept_young: usize,
    /// Unpublished segments kept because their revision is the youngest or beyond it.
    pub kept_unsettled: usize,
    /// `seg/` keys whose name is not `RRRRRRRRRRRR-COMMITID` (or that followed by
    /// `.upload`): never deleted, reported.
    pub unrecognised: Vec<String>,
    /// The multipart uploads of segments no head can name that were aborted (their
    /// `seg/RRRRRRRRRRRR-COMMITID.upload` records deleted), and the records of completed
    /// uploads whose deletion was lost: the records' keys.
    pub uploads_ended: Vec<String>,
}

impl Collected {
    /// Objects and bytes deleted, `seg/` and `txn/` together.
    pub fn totals(&self) -> (usize, u64) {
        let all = self.deleted.iter().chain(&self.txn_deleted);
        (
            self.deleted.len() + self.txn_deleted.len(),
            all.map(|(_, n)| n).sum(),
        )
    }
}

/// `RRRRRRRRRRRR-COMMITID` (12 digits, 32 lower-case hex digits): the revision and commit
/// id of a segment key's last part; None for anything else.
fn parse_segment_name(name: &str) -> Option<(u64, CommitId)> {
    let (rev, commit) = name.split_once('-')?;
    if rev.len() != 12 || !rev.bytes().all(|b| b.is_ascii_digit()) || commit.len() != 32 {
        return None;
    }
    let mut id = [0u8; 16];
    for (i, byte) in id.iter_mut().enumerate() {
        let pair = commit.get(2 * i..2 * i + 2)?;
        if !pair
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return None;
        }
        *byte = u8::from_str_radix(pair, 16).ok()?;
    }
    Some((rev.parse().ok()?, CommitId(id)))
}

/// Whether `name` is a commit id as keys spell it (32 lower-case hex digits).
fn is_commit_hex(name: &str) -> bool {
    name.len() == 32
        && name
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Whether an object listed with `meta` is at least `age` old at `now_micros`.
fn old_enough(meta: &ObjectMeta, now_micros: i64, age: Duration) -> bool {
    let age = i64::try_from(age.as_micros()).unwrap_or(i64::MAX);
    now_micros.saturating_sub(meta.last_modified.timestamp_micros()) >= age
}

impl Repository {
    async fn list(&self, under: &str) -> Result<object_store::ListResult, ClusterError> {
        let key = format!("{}/{under}", self.objects.prefix);
        let path = ObjectPath::from(key.as_str());
        let store = self.objects.store.clone();
        // A listing pages through the whole prefix: one request-timeout per page would be
        // fairer, but the client pages inside one call; ten request-timeouts bound it.
        let within = self.objects.timeout * 10;
        self.objects
            .timed(
                "list objects",
                &key,
                within,
                store.list_with_delimiter(Some(&path)),
            )
            .await
    }

    async fn delete_object(&self, location: &ObjectPath) -> Result<(), ClusterError> {
        let key = location.to_string();
        self.objects
            .timed(
                "delete object",
                &key,
                self.objects.timeout,
                self.objects.store.delete(location),
            )
            .await
    }

    /// One collection pass (docs/cluster.md, "Orphans") at `now_micros` (microseconds since
    /// the epoch, from the caller's clock). Stops at the first failure (nothing deleted
    /// wrongly: every deletion is decided before it is made, and a later pass redoes the
    /// rest).
    pub fn collect(
        &self,
        now_micros: i64,
        settings: GcSettings,
    ) -> Result<Collected, ClusterError> {
        let mut done = Collected::default();
        // 1. List `seg/`, and only then read the head (linearizable). Why a segment listed
        //    here whose revision R is older than that head's youngest Y, and which that head's
        //    chain does not name, can be deleted:
        //    - R < Y, so R's published segment is final: only the youngest revision's segment
        //      is ever replaced (a revision property change), and only while it is the
        //      youngest; heads never go back. The chain of this head names it for good.
        //    - Any other segment of R was put by an attempt that built on a head whose youngest
        //      was R - 1 (a commit) or R (a revision property change). Its publication is an
        //      etcd transaction conditioned on that head's mod revision; the head has since
        //      been replaced (its youngest is Y > R), so that transaction can only fail: the
        //      object can never become published (the design's argument: an attempt for
        //      revision N cannot publish once the head is at N or beyond).
        //    - Segments of R >= Y are kept: beyond the head they may be an attempt in flight
        //      for Y + 1; at Y itself, a revision property change in flight puts
        //      `seg/Y-NEWCOMMITID` before it publishes, and that object is unpublished until
        //      then. (The design said "at most the youngest"; at Y that would race with a
        //      revision property change. Y's replaced segments go once Y + 1 is published.)
        //    - Reading the head after the listing, not before, is what makes the chain's
        //      answer cover every object listed: an object put after the head read is not in
        //      the listing.
        let listed = self.block(self.list("seg"))?;
        let head = self.head()?.head;
        done.youngest = head.youngest;
        done.segments_listed = listed.objects.len();
        let chain = self.chain(&head)?;
        let published = |revision: u64| -> Option<CommitId> {
            let at = usize::try_from(revision).ok()?;
            chain
                .get(at)
                .filter(|s| s.revision == revision)
                .map(|s| s.commit)
        };
        // The listing's published segments by revision, for their ages (below).
        let mut published_meta = std::collections::HashMap::new();
        for meta in &listed.objects {
            let name = meta.location.filename().unwrap_or_default();
            if let Some((revision, commit)) = parse_segment_name(name) {
                if published(revision) == Some(commit) {
                    published_meta.insert(revision, meta);
                }
            }
        }
        let mut doomed = Vec::new();
        let mut uploads = Vec::new();
        for meta in &listed.objects {
            let name = meta.location.filename().unwrap_or_default();
            // The record of a large segment's multipart upload (docs/cluster.md, "Large
            // revisions"): deleted by the writer once the upload is complete or aborted.
            if let Some((revision, commit)) =
                name.strip_suffix(".upload").and_then(parse_segment_name)
            {
                if published(revision) == Some(commit) {
                    // Complete and published: only the record's deletion was lost.
                    if old_enough(meta, now_micros, settings.min_age) {
                        uploads.push((meta.clone(), None));
                    } else {
                        done.kept_young += 1;
                    }
                } else if revision >= head.youngest {
                    // Perhaps an upload in flight (the argument below, for segments).
                    done.kept_unsettled += 1;
                } else if old_enough(meta, now_micros, settings.min_age) {
                    let segment = SegmentRef { revision, commit };
                    uploads.push((meta.clone(), Some(self.objects.segment_key(segment))));
                } else {
                    done.kept_young += 1;
                }
                continue;
            }
            let Some((revision, commit)) = parse_segment_name(name) else {
                done.unrecognised.push(meta.location.to_string());
                continue;
            };
            if revision >= head.youngest {
                if published(revision) != Some(commit) {
                    done.kept_unsettled += 1;
                }
                continue;
            }
            let Some(theirs) = published(revision) else {
                return Err(ClusterError::Corrupt {
                    what: "head chain",
                    key: self.head_key().to_owned(),
                    detail: format!(
                        "the chain of r{} names no segment of r{revision}",
                        head.youngest
                    ),
                });
            };
            if theirs == commit {
                continue;
            }
            // A segment a revision property change replaced is named by every etcd snapshot
            // taken before the change: it goes only once its replacement is gc-min-age old
            // too, so a backup whose object copy ends within gc-min-age of its snapshot
            // holds every segment the snapshot names (docs/cluster.md, "Backups"). An
            // orphan of a failed attempt waits for the same; a published segment missing
            // from the listing keeps it.
            let replaced_long_ago = published_meta
                .get(&revision)
                .is_some_and(|theirs| old_enough(theirs, now_micros, settings.min_age));
            if !old_enough(meta, now_micros, settings.min_age) || !replaced_long_ago {
                done.kept_young += 1;
                continue;
            }
            doomed.push(meta.clone());
        }
        for meta in doomed {
            self.block(self.delete_object(&meta.location))?;
            done.deleted.push((meta.location.to_string(), meta.size));
        }
        for (meta, abort) in uploads {
            let record = meta.location.to_string();
            if let Some(segment_key) = abort {
                // An upload that can never be published: its parts are dropped. One that
                // the store no longer knows (completed, or aborted by an earlier pass whose
                // record deletion failed) needs nothing more; a completed object is an
                // orphan segment, deleted above or by a later pass.
                let id = self.block(self.objects.get("multipart upload record", &record))?;
                let id = String::from_utf8_lossy(&id).into_owned();
                match self.block(self.objects.abort_upload(&segment_key, &id)) {
                    Ok(()) => {}
                    Err(ClusterError::ObjectStore { source, .. })
                        if matches!(*source, object_store::Error::NotFound { .. }) => {}
                    Err(e) => return Err(e),
                }
            }
            self.block(self.delete_object(&meta.location))?;
            done.uploads_ended.push(record);
        }

        // 2. `txn/COMMITID/...`: a forwarded commit's staged texts, deleted after the commit by
        //    the writer; what is left once its newest object is txn-max-age old belongs to a
        //    commit that ended (commit_timeout bounds one).
        //    Only `txn/COMMITID/N` (32 hex digits, then digits) is touched: repository names
        //    may have `/` in them, so `NAME/txn/...` may also be another repository's prefix
        //    (repository `NAME/txn` keeps `NAME/txn/seg/...`); anything else is reported.
        let txn_age = settings.txn_max_age.max(settings.min_age);
        let txns = self.block(self.list("txn"))?;
        let mut groups: Vec<Vec<ObjectMeta>> = Vec::new();
        for meta in &txns.objects {
            done.unrecognised.push(meta.location.to_string());
        }
        for prefix in &txns.common_prefixes {
            if !prefix.filename().is_some_and(is_commit_hex) {
                done.unrecognised.push(prefix.to_string());
                continue;
            }
            let under = prefix
                .as_ref()
                .strip_prefix(&format!("{}/", self.objects.prefix))
                .unwrap_or(prefix.as_ref())
                .to_owned();
            let inside = self.block(self.list(&under))?;
            let numbered = inside.objects.iter().all(|m| {
                m.location
                    .filename()
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            });
            if !inside.common_prefixes.is_empty() || !numbered {
                done.unrecognised.push(prefix.to_string());
                continue;
            }
            groups.push(inside.objects);
        }
        for group in groups {
            if group.is_empty() {
                continue;
            }
            if !group.iter().all(|m| old_enough(m, now_micros, txn_age)) {
                done.kept_young += group.len();
                continue;
            }
            for meta in group {
                self.block(self.delete_object(&meta.location))?;
                done.txn_deleted
                    .push((meta.location.to_string(), meta.size));
            }
        }
        Ok(done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_well_formed_segment_names_are_parsed() {
        let hex = "00112233445566778899aabbccddeeff";
        let (rev, id) = parse_segment_name(&format!("000000000012-{hex}")).expect("a segment name");
        assert_eq!(rev, 12);
        assert_eq!(id.hex(), hex);
        for bad in [
            format!("12-{hex}"),
            format!("000000000012-{}", hex.to_uppercase()),
            format!("000000000012-{}", &hex[1..]),
            format!("00000000001x-{hex}"),
            "000000000012".to_owned(),
            format!("000000000012-{hex}0"),
        ] {
            assert_eq!(parse_segment_name(&bad), None, "{bad}");
        }
        assert!(is_commit_hex(hex));
        for bad in ["seg", "idx", &hex[1..], &hex.to_uppercase()] {
            assert!(!is_commit_hex(bad), "{bad}");
        }
    }
}
