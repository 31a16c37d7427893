//! svnrdump and svnsync over HTTP (the replay report, one per revision): what they copy from
//! Svelto must equal what they copy from Apache.

use std::path::Path;

use svelto_testkit::dumpfile::{assert_dumps_eq, uuid_of, with_uuid};
use svelto_testkit::{svnadmin_create, Run};

use crate::{pair, ALL};

#[test]
fn svnrdump_dumps_load_the_same_history() {
    for name in ALL {
        let pair = pair(name);
        let dumps: Vec<Vec<u8>> = [0, 1]
            .iter()
            .map(|&side| {
                let out = pair.run_on(side, Path::new(""), "svnrdump", &["dump", "-q", "{URL}"]);
                assert!(
                    out.success(),
                    "svnrdump dump {name} from {}:\n{out}",
                    pair.labels()[side]
                );
                let loaded = svnadmin_create();
                let l = loaded.try_load_bytes(&out.stdout, &[]);
                assert!(l.success(), "{l}");
                loaded.dump(&[])
            })
            .collect();
        let uuid = uuid_of(&dumps[0]).expect("the dump has a UUID");
        assert_dumps_eq(
            &dumps[0],
            &with_uuid(&dumps[1], &uuid),
            &format!("svnrdump-{name}"),
        );
    }
}

#[test]
fn svnsync_mirrors_are_the_same() {
    for name in ALL {
        let pair = pair(name);
        let dumps: Vec<Vec<u8>> = [0, 1]
            .iter()
            .map(|&side| {
                let mirror = svnadmin_create();
                let hook = mirror.path().join("hooks/pre-revprop-change");
                std::fs::write(&hook, "#!/bin/sh\nexit 0\n").expect("write the hook");
                Run::new("chmod").arg("+x").arg(&hook).success();
                for args in [
                    ["init", &mirror.url(), "{URL}"].as_slice(),
                    &["sync", &mirror.url()],
                ] {
                    let out = pair.run_on(side, Path::new(""), "svnsync", args);
                    assert!(
                        out.success(),
                        "svnsync {name} from {}:\n{out}",
                        pair.labels()[side]
                    );
                }
                mirror.dump(&["-r", "1:HEAD", "--incremental"])
            })
            .collect();
        let uuid = uuid_of(&dumps[0]).unwrap_or_default();
        let b = if uuid.is_empty() {
            dumps[1].clone()
        } else {
            with_uuid(&dumps[1], &uuid)
        };
        assert_dumps_eq(&dumps[0], &b, &format!("svnsync-{name}"));
    }
}
