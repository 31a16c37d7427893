#![no_main]
// A REPORT body as the HTTP front end parses it (XML, then the report's typed request):
// an answer or an error, never a panic. Seeds: crates/svelto-http/tests/report_parse.rs.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = svelto_http::parse_report(data);
});
