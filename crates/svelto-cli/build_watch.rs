/// The files whose change means HEAD moved: HEAD itself, the branch it names, and the
/// packed refs, each only if it exists. Cargo reruns a build script on every build while a
/// file it watches is missing (and the binary is then relinked each time): a checkout
/// whose refs were never packed has no `packed-refs`, and a branch that lives only in
/// `packed-refs` has no file of its own. `git` runs git with the given arguments.
fn watched(git: impl Fn(&[&str]) -> Option<String>) -> Vec<String> {
    let mut names = vec!["HEAD".to_string(), "packed-refs".to_string()];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        names.push(branch);
    }
    names
        .iter()
        .filter_map(|name| git(&["rev-parse", "--git-path", name]))
        .filter(|p| std::path::Path::new(p).exists())
        .collect()
}
