//! svnrdump and svnsync over HTTP (the replay report, one per revision): what they copy from
//! Svelto must equal what they copy from Apache; svnbench's null commands count the same.

use std::path::Path;

use svelto_testkit::dumpfile::{assert_dumps_eq, uuid_of, with_uuid};
use svelto_testkit::{svnadmin_create, Expect, Run, FILES_WITH_HISTORY};

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

/// Every subcommand of svnbench 1.14 (null-export, null-log, null-list, null-blame,
/// null-info) over HTTP: the counts it prints (ra_serf's property count includes the DAV
/// properties an update report carries, so they are compared with Apache's, not svn://'s).
#[test]
fn svnbench_null_commands() {
    for name in ALL {
        let pair = pair(name);
        let bench = |args: &[&str]| pair.both_tool("svnbench", args, Expect::Success);
        bench(&["null-export", "{URL}"]).expect_stdout("files");
        bench(&["null-export", "-r", "2", "{URL}"]);
        bench(&["null-export", "--depth", "immediates", "{URL}"]);
        bench(&["null-log", "{URL}"]).expect_stdout("revisions");
        bench(&["null-log", "-v", "-g", "{URL}"]);
        bench(&["null-log", "-v", "--limit", "3", "{URL}"]);
        bench(&["null-list", "-R", "{URL}"]).expect_stdout("directories");
        bench(&["null-list", "-R", "-v", "{URL}@1"]);
        bench(&["null-info", "-R", "{URL}"]);
        bench(&["null-info", "{URL}@1"]);
    }
    for &(name, file) in FILES_WITH_HISTORY {
        let pair = pair(name);
        let bench = |args: &[&str]| pair.both_tool("svnbench", args, Expect::Success);
        let url = format!("{{URL}}/{file}");
        bench(&["null-blame", &url]).expect_stdout("revisions");
        bench(&["null-blame", "-g", &url]);
        bench(&["null-blame", "-r", "HEAD:1", &url]);
        bench(&["null-export", "-r", "2", "{URL}/trunk"]);
        bench(&["null-log", "-v", "--limit", "3", "{URL}/trunk"]);
    }
}
