use std::path::Path;
use svelto_core::PropList;
use svelto_store::{create_db, Writer};

pub fn new_repo(dir: &Path) -> Writer {
    let mut r0 = PropList::new();
    r0.insert(
        b"svn:date".to_vec(),
        b"2026-01-01T00:00:00.000000Z".to_vec(),
    );
    create_db(dir, "00000000-0000-4000-8000-000000000000", &r0).expect("create");
    Writer::open(dir).expect("open writer")
}
