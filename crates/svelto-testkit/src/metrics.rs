//! Reading the Prometheus text `--metrics-listen` serves.

/// The sum of a metric's samples whose labels include the ones asked for:
/// `svelto_commits_total` sums every protocol's, `svelto_requests_total{command="update"}`
/// every protocol's `update`, `svelto_commits_total{protocol="http"}` HTTP's alone.
pub fn metric_sum(text: &str, query: &str) -> Option<u64> {
    let (name, want) = match query.split_once('{') {
        Some((n, l)) => (n, l.trim_end_matches('}')),
        None => (query, ""),
    };
    let want: Vec<&str> = want.split(',').filter(|l| !l.is_empty()).collect();
    let mut found = None;
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let Some((sample, value)) = line.rsplit_once(' ') else {
            continue;
        };
        let (n, labels) = match sample.split_once('{') {
            Some((n, l)) => (n, l.trim_end_matches('}')),
            None => (sample, ""),
        };
        let have: Vec<&str> = labels.split(',').collect();
        if n == name && want.iter().all(|w| have.contains(w)) {
            let v = value.parse::<f64>().map_or(0, |v| v as u64);
            found = Some(found.unwrap_or(0) + v);
        }
    }
    found
}
