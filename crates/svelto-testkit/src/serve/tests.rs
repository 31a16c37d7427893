use super::*;

#[test]
fn finds_the_listening_port() {
    assert_eq!(listening_port("listening on 127.0.0.1:4567"), Some(4567));
    assert_eq!(
        listening_port("2026-01-01T00:00:00Z INFO svelto: listening on 127.0.0.1:80 (2 repos)"),
        Some(80)
    );
    assert_eq!(listening_port("listening on 127.0.0.1:0"), None);
    assert_eq!(listening_port("listening on [::1]:4567"), None);
}

#[test]
fn normalizes_and_masks() {
    let n = Normalizer::new()
        .replace("svn://127.0.0.1:4567", SERVER_PLACEHOLDER)
        .replace("/tmp/a/work", WORK_PLACEHOLDER);
    let out = n.apply(
        b"URL: svn://127.0.0.1:4567/r/trunk\nWorking Copy Root Path: /tmp/a/work/s/wc\n\
          Text Last Updated: 2026-01-01 10:00:00 +0000 (Thu, 01 Jan 2026)\n\
          <text-updated>2026-01-01T10:00:00.000000Z</text-updated>\n\
          0.001 seconds taken\n",
    );
    assert_eq!(
        String::from_utf8(out).expect("utf-8"),
        "URL: svn://SERVER/r/trunk\nWorking Copy Root Path: {WORK}/s/wc\n\
         Text Last Updated: {TIME}\n<text-updated>{TIME}</text-updated>\n\
         {SECONDS} seconds taken\n"
    );
}

#[test]
fn canonicalizes_xml_and_order() {
    let xml = b"<?xml version=\"1.0\"?>\n<path\n   b=\"2\"\n   a=\"x>y\">p</path>\n<x/>\n";
    assert_eq!(
        String::from_utf8(canonical_output(xml, Order::Kept)).expect("utf-8"),
        "<?xml version=\"1.0\"?>\n<path a=\"x>y\" b=\"2\">p</path>\n<x/>\n"
    );
    assert_eq!(sorted_blocks(b"b\na\nc", DIFF_BLOCKS), b"a\nb\nc\n");
    assert_eq!(
        sorted_blocks(b"Index: z\n-1\nIndex: a\n+2\n", DIFF_BLOCKS),
        b"Index: a\n+2\nIndex: z\n-1\n"
    );
    assert_eq!(
        output_order("svn", &["update", "--depth", "x"]),
        Order::Blocks(&[])
    );
    assert_eq!(
        output_order("svn", &["info", "-R", "x"]),
        Order::Blocks(INFO_BLOCKS)
    );
    assert_eq!(output_order("svn", &["info", "x"]), Order::Kept);
    assert_eq!(output_order("svn", &["log", "-v"]), Order::Kept);
}

#[test]
fn shows_the_first_difference() {
    assert_eq!(first_difference(["a", "b"], b"x\ny", b"x\ny"), None);
    let d = first_difference(["a", "b"], b"1\n2\n3\n", b"1\n2\nX\n").expect("differ");
    assert!(d.contains("line 3"), "{d}");
    assert!(d.contains("- a: 3"), "{d}");
    assert!(d.contains("+ b: X"), "{d}");
    let d = first_difference(["a", "b"], b"1\n", b"1\n2\n").expect("differ");
    assert!(d.contains("(end)"), "{d}");
}
